/**
 * A local realtime hub on a free loopback port with its own signing key, and what tests need around it: tokens
 * for users and admins, a publisher signing with the hub's key pair, a raw protocol socket, and a collector for
 * pushes, and an endpoint that holds some publishes unanswered. Real servers only (the hub, `ws`, Node's
 * WebSocket and fetch); nothing mocked.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ulid } from 'ulid';
import type { JWTPayload } from 'jose';
import { generateLocalJwtKey, signLocalToken, verifyLocalToken, type LocalJwtKey, type LocalTokenClaims } from '../../lib/api/local-jwt.ts';
import { LOCAL_TOKEN_AUDIENCE } from '../../lib/dev/local-runtime/local-auth.ts';
import { startRealtimeHub, type RealtimeHub, type RealtimeHubOptions } from '../../lib/dev/local-runtime/realtime-hub.ts';
import { jobChannel } from '../../lib/realtime/channel.ts';
import { EVENT_WS_SUBPROTOCOL, authSubprotocol, tokenAuthorization } from '../../lib/realtime/events-protocol.ts';
import { HttpStreamPublisher, type HttpStreamPublisherOptions } from '../../lib/realtime/publisher.ts';
import { ownerSegmentOfSubjectSync } from '../../lib/realtime/server-channel.ts';
import { createEventsSigner } from '../../lib/realtime/sigv4.ts';
import type { StreamEntry, StreamPush } from '../../lib/stream/protocol.ts';

export const REGION = 'us-east-1';
export const CREDENTIALS = { accessKeyId: 'local-test', secretAccessKey: 'local-test-secret' };
export const POLICY = { adminClaim: 'cognito:groups', adminGroup: 'SUPER_ADMIN', audiences: [LOCAL_TOKEN_AUDIENCE.audience] };

export interface TestHub {
  hub: RealtimeHub;
  key: LocalJwtKey;
  token(sub: string, claims?: Partial<LocalTokenClaims>): Promise<string>;
  publisher(options?: Partial<HttpStreamPublisherOptions>): HttpStreamPublisher;
  stop(): Promise<void>;
}

/** A hub on `port` (0: a free one) trusting `key` (default: a new one). */
export async function startTestHub(options: Partial<RealtimeHubOptions> & { key?: LocalJwtKey } = {}): Promise<TestHub> {
  const key = options.key ?? generateLocalJwtKey();
  const hub = await startRealtimeHub({
    port: 0,
    verifyToken: (token): Promise<JWTPayload> => verifyLocalToken(key, token, LOCAL_TOKEN_AUDIENCE),
    policy: POLICY,
    publisher: { region: REGION, credentials: CREDENTIALS },
    ...options,
  });
  return {
    hub, key,
    token: (sub, claims = {}) => signLocalToken(key, { sub, ...LOCAL_TOKEN_AUDIENCE, ...claims }, { claim: POLICY.adminClaim, group: POLICY.adminGroup }),
    publisher: (o = {}) => new HttpStreamPublisher({ httpEndpoint: hub.httpEndpoint, sign: createEventsSigner(REGION, CREDENTIALS), ...o }),
    stop: () => hub.stop(),
  };
}

/** The channel of `jobId` owned by `sub`. */
export function channelFor(sub: string, jobId: string): string {
  return jobChannel(ownerSegmentOfSubjectSync(sub), jobId);
}

export function newJobId(): string {
  return ulid();
}

/** A push of `count` text entries starting at `firstSeq`. */
export function textPush(userId: string, jobId: string, firstSeq: number, count = 1, delta = 'word '): StreamPush {
  const entries: StreamEntry[] = Array.from({ length: count }, (_, i) => ({
    type: 'text', seq: firstSeq + i, attempt: 1, at: new Date(0).toISOString(), field: 'feedback', delta,
  }));
  return { userId, jobId, entries };
}

/** A WebSocket to the hub speaking the raw protocol, with its messages queued for `next`. */
export interface RawSocket {
  ws: WebSocket;
  send(message: unknown): void;
  /** The next message matching `predicate` (default: any), waiting for it. */
  next(predicate?: (m: Record<string, any>) => boolean): Promise<Record<string, any>>;
  closed: Promise<void>;
}

export async function rawSocket(url: string, token: string | undefined, httpHost: string): Promise<RawSocket> {
  const protocols = [EVENT_WS_SUBPROTOCOL, ...(token ? [authSubprotocol(tokenAuthorization(httpHost, token))] : [])];
  const ws = new WebSocket(url, protocols);
  const seen: Record<string, any>[] = [];
  const waiters: { predicate: (m: Record<string, any>) => boolean; resolve: (m: Record<string, any>) => void }[] = [];
  ws.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as Record<string, any>;
    const waiter = waiters.find((w) => w.predicate(message));
    if (waiter) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(message);
    } else seen.push(message);
  });
  const closed = new Promise<void>((resolve) => ws.addEventListener('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error('socket failed to open')), { once: true });
  });
  return {
    ws, closed,
    send: (message) => ws.send(JSON.stringify(message)),
    next: (predicate = () => true) => {
      const found = seen.find(predicate);
      if (found) {
        seen.splice(seen.indexOf(found), 1);
        return Promise.resolve(found);
      }
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}

/** Resolves when `condition` holds, checking on every `tick` call (event-driven, no polling sleep). */
export function waitUntil(condition: () => boolean): { promise: Promise<void>; tick(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  const tick = () => condition() && resolve();
  return { promise, tick };
}

/**
 * An HTTP endpoint that accepts every publish at once, except those whose body mentions `holdMark`: it never
 * answers them. `arrived` resolves when the first held request is in.
 */
export async function holdingEndpoint(holdMark: string): Promise<{ url: string; arrived: Promise<void>; close(): Promise<void> }> {
  let arrivedNow!: () => void;
  const arrived = new Promise<void>((resolve) => (arrivedNow = resolve));
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
      if (body.includes(holdMark)) {
        arrivedNow();
        return;
      }
      const { events } = JSON.parse(body) as { events: string[] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ successful: events.map((_, index) => ({ index, identifier: `${index}` })), failed: [] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrived,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
