/**
 * The realtime client (Node's global WebSocket, as a browser would run it): subscribes with the JWT, delivers
 * parsed pushes, reports refused subscriptions with their error types, reconnects with backoff after the hub
 * goes away and comes back (telling the reader to backfill each time), and closes a connection whose keep-alive
 * stopped.
 */
import { buildSync } from 'esbuild';
import { WebSocketServer } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { createRealtimeClient, type RealtimeClient, type RealtimeError } from '../../lib/client/realtime-client.ts';
import { backoffDelay } from '../../lib/client/realtime-errors.ts';
import type { StreamPush } from '../../lib/stream/protocol.ts';
import { channelFor, newJobId, startTestHub, textPush, waitUntil, type TestHub } from './realtime-fixture.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hub(options: Parameters<typeof startTestHub>[0] = {}): Promise<TestHub> {
  const t = await startTestHub(options);
  cleanups.push(() => t.stop());
  return t;
}

function client(t: TestHub, sub: string, extra: Partial<Parameters<typeof createRealtimeClient>[0]> = {}): RealtimeClient {
  const c = createRealtimeClient({ httpEndpoint: t.hub.httpEndpoint, getToken: () => t.token(sub), backoff: { initialMs: 20, maxMs: 200 }, ...extra });
  cleanups.push(() => c.close());
  return c;
}

describe('realtime client', () => {
  it('delivers parsed pushes of its subscription and says when it is live', async () => {
    const t = await hub();
    const jobId = newJobId();
    const got: StreamPush[] = [];
    const live = waitUntil(() => true);
    const received = waitUntil(() => got.length === 1);
    client(t, 'alice').subscribe(channelFor('alice', jobId), { onSubscribed: live.tick, onPush: (p) => { got.push(p); received.tick(); } });
    await live.promise;
    t.publisher().publish(textPush('alice', jobId, 7));
    await received.promise;
    expect(got).toEqual([textPush('alice', jobId, 7)]);
  });

  it("reports a refused subscription with its error type, not retryable, and ends it: another user's channel", async () => {
    const t = await hub();
    const errors: RealtimeError[] = [];
    const refused = waitUntil(() => errors.length === 1);
    client(t, 'bob').subscribe(channelFor('alice', newJobId()), { onPush: () => undefined, onError: (e) => { errors.push(e); refused.tick(); } });
    await refused.promise;
    expect(errors[0]).toMatchObject({ errorType: 'UnauthorizedException', retryable: false });
  });

  it('reports a malformed channel as BadRequestException', async () => {
    const t = await hub();
    const errors: RealtimeError[] = [];
    const refused = waitUntil(() => errors.length === 1);
    client(t, 'alice').subscribe('/jobs/not a channel', { onPush: () => undefined, onError: (e) => { errors.push(e); refused.tick(); } });
    await refused.promise;
    expect(errors[0]).toMatchObject({ errorType: 'BadRequestException', retryable: false });
  });

  it('reports a refused connection (expired token) to the subscriber and stops instead of looping', async () => {
    const t = await hub();
    const errors: RealtimeError[] = [];
    let connections = 0;
    const refused = waitUntil(() => errors.length === 2);
    const c = createRealtimeClient({
      httpEndpoint: t.hub.httpEndpoint, getToken: () => { connections += 1; return t.token('alice', { expiresIn: -60 }); },
      onConnectionError: (e) => { errors.push(e); refused.tick(); },
    });
    cleanups.push(() => c.close());
    c.subscribe(channelFor('alice', newJobId()), { onPush: () => undefined, onError: (e) => { errors.push(e); refused.tick(); } });
    await refused.promise;
    expect(errors.map((e) => e.errorType)).toEqual(['UnauthorizedException', 'UnauthorizedException']);
    expect(connections).toBe(1);
    expect(() => c.subscribe(channelFor('alice', newJobId()), { onPush: () => undefined })).toThrow(/closed/);
  });

  it('reconnects with backoff after the hub goes away and comes back, re-subscribes, and asks for a backfill each time', async () => {
    const first = await startTestHub();
    const { port } = first.hub;
    const jobId = newJobId();
    let subscribed = 0;
    const lost: string[] = [];
    const got: number[] = [];
    const firstLive = waitUntil(() => subscribed === 1);
    const secondLive = waitUntil(() => subscribed === 2);
    const received = waitUntil(() => got.length === 1);
    const c = createRealtimeClient({
      httpEndpoint: first.hub.httpEndpoint, getToken: () => first.token('alice'), backoff: { initialMs: 20, maxMs: 200 },
      onConnectionError: (e) => lost.push(e.errorType),
    });
    cleanups.push(() => c.close());
    c.subscribe(channelFor('alice', jobId), {
      onSubscribed: () => { subscribed += 1; firstLive.tick(); secondLive.tick(); },
      onPush: (p) => { got.push(...p.entries.map((e) => e.seq)); received.tick(); },
    });
    await firstLive.promise;
    await first.stop();
    const second = await hub({ port, key: first.key });
    await secondLive.promise;
    expect(lost[0]).toBe('ConnectionLost');
    second.publisher().publish(textPush('alice', jobId, 3));
    await received.promise;
    expect(got).toEqual([3]);
  });

  it('closes a connection whose keep-alive stopped and opens a new one', async () => {
    let connections = 0;
    const errors: string[] = [];
    const reconnected = waitUntil(() => connections >= 2);
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => 'aws-appsync-event-ws' });
    cleanups.push(() => new Promise((resolve) => { for (const c of wss.clients) c.terminate(); wss.close(resolve); }));
    wss.on('connection', (ws) => {
      connections += 1;
      reconnected.tick();
      ws.on('message', (data) => {
        if (JSON.parse(String(data)).type === 'connection_init') ws.send(JSON.stringify({ type: 'connection_ack', connectionTimeoutMs: 150 }));
      });
    });
    await new Promise((resolve) => wss.once('listening', resolve));
    const port = (wss.address() as { port: number }).port;
    const c = createRealtimeClient({
      httpEndpoint: `http://127.0.0.1:${port}/event`, getToken: () => 'token', backoff: { initialMs: 10, maxMs: 50 },
      onConnectionError: (e) => errors.push(e.errorType),
    });
    cleanups.push(() => c.close());
    c.subscribe(channelFor('alice', newJobId()), { onPush: () => undefined });
    await reconnected.promise;
    expect(errors).toContain('KeepAliveTimeout');
  });

  it('reports a data message that is not a stream push as InvalidPush and keeps the subscription', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => 'aws-appsync-event-ws' });
    cleanups.push(() => new Promise((resolve) => { for (const c of wss.clients) c.terminate(); wss.close(resolve); }));
    wss.on('connection', (ws) => ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { type: string; id: string };
      if (m.type === 'connection_init') ws.send(JSON.stringify({ type: 'connection_ack', payload: { connectionTimeoutMs: 300_000 } }));
      if (m.type === 'subscribe') {
        ws.send(JSON.stringify({ type: 'subscribe_success', id: m.id }));
        ws.send(JSON.stringify({ type: 'data', id: m.id, event: '{"not":"a push"}' }));
        ws.send(JSON.stringify({ type: 'data', id: m.id, event: JSON.stringify(textPush('alice', 'J', 1)) }));
      }
    }));
    await new Promise((resolve) => wss.once('listening', resolve));
    const errors: string[] = [];
    const got: StreamPush[] = [];
    const done = waitUntil(() => got.length === 1);
    const c = createRealtimeClient({ httpEndpoint: `http://127.0.0.1:${(wss.address() as { port: number }).port}/event`, getToken: () => 'token' });
    cleanups.push(() => c.close());
    c.subscribe(channelFor('alice', newJobId()), { onPush: (p) => { got.push(p); done.tick(); }, onError: (e) => errors.push(e.errorType) });
    await done.promise;
    expect(errors).toEqual(['InvalidPush']);
  });

  it('closes the connection when its last subscription ends', async () => {
    const t = await hub();
    const live = waitUntil(() => true);
    const subscription = client(t, 'alice').subscribe(channelFor('alice', newJobId()), { onPush: () => undefined, onSubscribed: live.tick });
    await live.promise;
    expect(t.hub.stats()).toEqual({ connections: 1, subscriptions: 1 });
    subscription.unsubscribe();
    const closed = waitUntil(() => t.hub.stats().connections === 0);
    const timer = setInterval(closed.tick, 10);
    await closed.promise.finally(() => clearInterval(timer));
  });

  it('bundles for the browser: no Node-only import in the client, the watcher or the channel helpers, and no schema library', () => {
    const out = buildSync({
      entryPoints: ['lib/client/realtime-client.ts', 'lib/client/watch-job.ts', 'lib/realtime/channel.ts'], bundle: true, platform: 'browser', format: 'esm',
      write: false, outdir: 'out', logLevel: 'silent', metafile: true,
    });
    expect(out.errors).toEqual([]);
    for (const file of out.outputFiles) expect(file.text).not.toMatch(/from ["']node:|require\(["']node:/);
    // The console's JavaScript budget (docs/console.md) cannot hold zod: pushes are checked by lib/stream/push-guard.ts.
    expect(Object.keys(out.metafile!.inputs).filter((path) => path.includes('node_modules'))).toEqual([]);
  });

  it('backs off exponentially with jitter, capped', () => {
    expect([0, 1, 2, 3, 10].map((n) => backoffDelay(n, 100, 1_000, () => 1))).toEqual([100, 200, 400, 800, 1_000]);
    expect(backoffDelay(3, 100, 1_000, () => 0)).toBe(400);
  });
});
