/**
 * Plays API Gateway's HTTP API locally: matches the request against the route tables, verifies the bearer
 * token like the JWT authorizer, builds the same payload-2.0 event with `authorizer.jwt.claims`, and calls the
 * very Lambda handlers. What API Gateway answers itself it answers here with the same status and shape
 * `{"message": …}`: 404 for no route, 401 from the authorizer, 413 past 10 MB, 431 past 10240 bytes of request
 * line and header values (HTTP API quota), 500 when the function fails. Not emulated: stage throttling (429) and
 * the 30 s integration timeout (503) — docs/security.md lists these differences.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { ADMIN_ROUTES, STREAM_ROUTES, USER_ROUTES, matchRoute, type ApiRoute, type RouteMatch } from '../../api/routes.ts';
import { STREAM_FUNCTION_TIMEOUT_SECONDS } from '../../stream/long-poll.ts';
import { toAuthorizerClaims, verifyLocalToken, type LocalJwtKey, type TokenAudience } from '../../api/local-jwt.ts';
import type { JWTPayload } from 'jose';
import { unverifiedIssuer } from './local-oidc.ts';
import { readBodyUpTo } from '../read-body.ts';

export type ApiHandler = (event: APIGatewayProxyEventV2WithJWTAuthorizer, context: Context) => Promise<APIGatewayProxyResultV2>;

export interface GatewayOptions {
  jwtKey: LocalJwtKey;
  audience: TokenAudience;
  userHandler: ApiHandler;
  adminHandler: ApiHandler;
  /** The stream routes' function (a job's stream log, long-polled), called with its own, longer deadline. */
  streamHandler: ApiHandler;
  /** An OIDC issuer trusted too (local-oidc.ts): its tokens go to `verify`, all others to the local key. */
  oidc?: { issuer: string; verify(token: string): Promise<JWTPayload> };
  /** Local-only paths tried before the API routes (the console); resolves true when it answered. */
  localRoutes?(req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean>;
  onError(err: unknown): void;
}

/** API Gateway refuses payloads over 10 MB; the handlers enforce their own, smaller limits. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** HTTP API quota: "Total combined size of request line and header values", 10240 bytes. */
export const MAX_REQUEST_LINE_AND_HEADER_BYTES = 10_240;

export function createGatewayServer(o: GatewayOptions): http.Server {
  // Node's own header limit (16 KiB) would answer 431 without a body first; ours must decide.
  return http.createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    handle(req, res, o).catch((err: unknown) => {
      o.onError(err);
      send(res, 500, { message: 'Internal Server Error' });
    });
  });
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, o: GatewayOptions): Promise<void> {
  if (requestLineAndHeaderBytes(req) > MAX_REQUEST_LINE_AND_HEADER_BYTES) {
    req.resume();
    return send(res, 431, { message: 'Request Header Fields Too Large' });
  }
  if (await o.localRoutes?.(req, res)) return;
  const url = new URL(req.url ?? '/', 'http://localhost');
  const method = req.method ?? 'GET';
  const target = routeTarget(method, url.pathname, o);
  const match: RouteMatch<ApiRoute> | null = target?.match ?? null;
  if (!match) {
    req.resume();
    return send(res, 404, { message: 'Not Found' });
  }
  const body = await readBodyUpTo(req, MAX_BODY_BYTES);
  if (body === undefined) return send(res, 413, { message: 'Request Entity Too Large' });
  const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  let claims: Record<string, string>;
  try {
    if (!token) throw new Error('no token');
    const payload = o.oidc && unverifiedIssuer(token) === o.oidc.issuer ? await o.oidc.verify(token) : await verifyLocalToken(o.jwtKey, token, o.audience);
    claims = toAuthorizerClaims(payload);
  } catch {
    return send(res, 401, { message: 'Unauthorized' });
  }
  const event = toEvent(req, url, match, body, claims);
  const result = await target!.handler(event, lambdaContext(target!.functionName, target!.timeoutSeconds));
  writeResult(res, result);
}

/** The function a request goes to, as API Gateway's routes send it: the route tables in order, each to its function. */
function routeTarget(method: string, path: string, o: GatewayOptions) {
  const tables = [
    { routes: USER_ROUTES, handler: o.userHandler, functionName: 'api-user', timeoutSeconds: 29 },
    { routes: ADMIN_ROUTES, handler: o.adminHandler, functionName: 'api-admin', timeoutSeconds: 29 },
    { routes: STREAM_ROUTES, handler: o.streamHandler, functionName: 'api-stream', timeoutSeconds: STREAM_FUNCTION_TIMEOUT_SECONDS },
  ];
  for (const { routes, ...target } of tables) {
    const match = matchRoute<ApiRoute>(routes, method, path);
    if (match) return { match, ...target };
  }
  return undefined;
}

function toEvent(
  req: http.IncomingMessage, url: URL, match: RouteMatch<ApiRoute>, body: Buffer, claims: Record<string, string>,
): APIGatewayProxyEventV2WithJWTAuthorizer {
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]));
  const query = queryParameters(url.search.replace(/^\?/, ''));
  const now = new Date();
  return {
    version: '2.0', routeKey: match.routeKey, rawPath: url.pathname, rawQueryString: url.search.replace(/^\?/, ''),
    headers, ...(query ? { queryStringParameters: query } : {}),
    ...(Object.keys(match.pathParameters).length ? { pathParameters: match.pathParameters } : {}),
    ...bodyFields(body),
    requestContext: {
      accountId: '000000000000', apiId: 'local', domainName: headers.host ?? 'localhost', domainPrefix: 'local',
      http: { method: req.method ?? 'GET', path: url.pathname, protocol: 'HTTP/1.1', sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(), routeKey: match.routeKey, stage: '$default', time: now.toUTCString(), timeEpoch: now.getTime(),
      authorizer: { principalId: '', integrationLatency: 0, jwt: { claims, scopes: [] } },
    },
  };
}

/**
 * `queryStringParameters` as payload 2.0 has them: duplicates joined with commas. A value whose percent-encoding
 * is not UTF-8 is kept as sent rather than decoded to U+FFFD (a silent change); validation then refuses it.
 */
function queryParameters(raw: string): Record<string, string> | undefined {
  if (raw === '') return undefined;
  const params = new Map<string, string>(); // a Map: a parameter named `__proto__` stays a parameter
  for (const pair of raw.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const [name, value] = [strictDecode(at < 0 ? pair : pair.slice(0, at)), strictDecode(at < 0 ? '' : pair.slice(at + 1))];
    const previous = params.get(name);
    params.set(name, previous === undefined ? value : `${previous},${value}`);
  }
  return params.size > 0 ? Object.fromEntries(params) : undefined;
}

function strictDecode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

/** The request line (`GET /path HTTP/1.1`) plus every header value, in bytes, as API Gateway's quota counts them. */
function requestLineAndHeaderBytes(req: http.IncomingMessage): number {
  let bytes = Buffer.byteLength(`${req.method ?? ''} ${req.url ?? ''} HTTP/${req.httpVersion}`);
  for (let i = 1; i < req.rawHeaders.length; i += 2) bytes += Buffer.byteLength(req.rawHeaders[i] ?? '');
  return bytes;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A UTF-8 body as text; anything else base64-encoded, as API Gateway passes binary, so no byte is replaced. */
function bodyFields(body: Buffer): { body?: string; isBase64Encoded: boolean } {
  if (body.length === 0) return { isBase64Encoded: false };
  try {
    return { body: STRICT_UTF8.decode(body), isBase64Encoded: false };
  } catch {
    return { body: body.toString('base64'), isBase64Encoded: true };
  }
}

function lambdaContext(functionName: string, timeoutSeconds: number): Context {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false, functionName, functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`, memoryLimitInMB: '512',
    awsRequestId: randomUUID(), logGroupName: `/aws/lambda/${functionName}`, logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined, fail: () => undefined, succeed: () => undefined,
  };
}

function writeResult(res: http.ServerResponse, result: APIGatewayProxyResultV2): void {
  if (typeof result === 'string') return send(res, 200, result);
  const body = result.body === undefined ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
  res.writeHead(result.statusCode ?? 200, { ...(result.headers as Record<string, string> | undefined) });
  res.end(body);
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}
