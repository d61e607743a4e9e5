/**
 * An HTTP API in front of a peer's create (graphile-worker-kept's, ./graphile-kept-peer.ts), so the peer's clients
 * submit as ours' do (./http-clients.ts): `POST /jobs` over node:http with keep-alive, the bearer token checked as
 * ours' local authorizer checks it (lib/api/local-jwt.ts: HS256, issuer, audience, `sub` and `exp`, a verified
 * token remembered until its `exp`), the JSON body parsed and validated with the job type's input schema, the
 * `Idempotency-Key` header required, and the job created in one transaction and answered `202 {"jobId"}`.
 *
 * It is the work an API does for every create, in the peer's own process. Ours does more on this path (the local
 * gateway's API Gateway event, middy's middleware, the input's redaction into its snapshot); a peer that did none
 * of it would leave all of it on ours' side of `cpu_ratio_kept` and of the submit hand-off.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { verifyLocalToken, type LocalJwtKey, type TokenAudience } from '../../lib/api/local-jwt.ts';
import { MAX_BODY_BYTES } from '../../lib/api/request-schemas.ts';

export interface HttpFrontOptions<I> {
  key: LocalJwtKey;
  audience: TokenAudience;
  inputSchema: z.ZodType<I>;
  /** Creates the job (after the request was authenticated and its input validated); resolves to its id once committed. */
  create(request: { userId: string; idempotencyKey: string; input: I }): Promise<string>;
}

export interface HttpFront {
  /** `http://127.0.0.1:<port>`; jobs go to `${url}/jobs`. */
  url: string;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** Starts the front on a free loopback port. */
export async function startHttpFront<I>(o: HttpFrontOptions<I>): Promise<HttpFront> {
  const server = http.createServer({ keepAlive: true }, (req, res) => {
    handle(o, req).then(
      (jobId) => answer(res, 202, { jobId }),
      (err: unknown) => answer(res, err instanceof HttpError ? err.status : 500, { error: err instanceof Error ? err.message : String(err) }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    }),
  };
}

async function handle<I>(o: HttpFrontOptions<I>, req: http.IncomingMessage): Promise<string> {
  const body = await readBody(req);
  if (req.method !== 'POST' || req.url !== '/jobs') throw new HttpError(404, 'Not found');
  const bearer = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '');
  if (!bearer) throw new HttpError(401, 'Missing bearer token');
  const claims = await verifyLocalToken(o.key, bearer[1]!, o.audience).catch(() => {
    throw new HttpError(401, 'Invalid token');
  });
  const idempotencyKey = req.headers['idempotency-key'];
  if (typeof idempotencyKey !== 'string' || idempotencyKey === '') throw new HttpError(400, 'Idempotency-Key is required');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new HttpError(400, 'The body is not JSON');
  }
  const input = o.inputSchema.safeParse(json);
  if (!input.success) throw new HttpError(400, `Invalid input: ${input.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return o.create({ userId: claims.sub!, idempotencyKey, input: input.data });
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => (bytes > MAX_BODY_BYTES ? reject(new HttpError(413, 'The body is too large')) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

function answer(res: http.ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
