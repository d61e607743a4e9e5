/**
 * withStreamPublishing (lib/realtime/handler-publishing.ts): a handler's pushes are delivered before it returns
 * when the service answers, abandoned at the bound when it does not; the handler's own result or error is what
 * the caller gets; invocations sharing a process each flush their own. ensureStreamPublisher builds the
 * environment's publisher once, never over a registered one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ensureStreamPublisher, withStreamPublishing } from '../../lib/realtime/handler-publishing.ts';
import { HttpStreamPublisher } from '../../lib/realtime/publisher.ts';
import { NO_STREAM_PUBLISHER, type StreamPush } from '../../lib/stream/protocol.ts';
import { publishPush, registerStreamPublisher, streamPublisher } from '../../lib/stream/publisher-registry.ts';
import { freePort } from '../helpers/ports.ts';
import { channelFor, holdingEndpoint, newJobId, startTestHub, textPush, waitUntil, type TestHub } from './realtime-fixture.ts';
import { createRealtimeClient } from '../../lib/client/realtime-client.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function use(publisher: Parameters<typeof registerStreamPublisher>[0]): void {
  const previous = registerStreamPublisher(publisher);
  cleanups.push(() => registerStreamPublisher(previous));
}

async function hub(): Promise<TestHub> {
  const t = await startTestHub();
  cleanups.push(() => t.stop());
  return t;
}

describe('withStreamPublishing', () => {
  it('returns the handler\'s result once its pushes reached the service', async () => {
    const t = await hub();
    const publisher = t.publisher();
    use(publisher);
    const jobId = newJobId();
    const got: StreamPush[] = [];
    const live = waitUntil(() => true);
    const client = createRealtimeClient({ httpEndpoint: t.hub.httpEndpoint, getToken: () => t.token('alice') });
    cleanups.push(() => client.close());
    client.subscribe(channelFor('alice', jobId), { onSubscribed: live.tick, onPush: (p) => got.push(p) });
    await live.promise;
    // The flush bound is production's 250 ms; a loaded test machine gets longer, as what is proved is the order.
    const handler = withStreamPublishing(async (n: number) => {
      publishPush(textPush('alice', jobId, n));
      return n * 2;
    }, 10_000);
    expect(await handler(1)).toBe(2);
    expect(publisher.stats()).toMatchObject({ published: 1, inFlight: 0, queued: 0 });
  });

  it('gives up on a dead endpoint within the bound, nothing left in flight, and passes the handler\'s error on', async () => {
    const publisher = new HttpStreamPublisher({ httpEndpoint: `http://127.0.0.1:${await freePort()}/event`, sign: async (url, body) => ({ url, body, headers: {} }), timeoutMs: 60_000 });
    use(publisher);
    const failing = withStreamPublishing(async () => {
      publishPush(textPush('alice', newJobId(), 1));
      throw new RangeError('the handler failed');
    });
    await expect(failing()).rejects.toThrow(RangeError);
    expect(publisher.stats()).toMatchObject({ inFlight: 0, queued: 0 });
    expect(publisher.stats().failed + publisher.stats().dropped).toBe(1);
  });
});

describe('withStreamPublishing, invocations sharing a process', () => {
  it('flushes each invocation\'s own publishes: a fast one returns without waiting for, or dropping, a held one\'s', async () => {
    const slowJob = newJobId();
    const held = await holdingEndpoint(slowJob);
    cleanups.push(() => held.close());
    const publisher = new HttpStreamPublisher({ httpEndpoint: `${held.url}/event`, sign: async (url, body) => ({ url, body, headers: {} }), timeoutMs: 60_000 });
    use(publisher);
    let finishSlow!: () => void;
    const slowMayReturn = new Promise<void>((resolve) => (finishSlow = resolve));
    const slow = withStreamPublishing(async () => {
      publishPush(textPush('alice', slowJob, 1));
      await slowMayReturn;
    }, 100)();
    await held.arrived;
    await withStreamPublishing(async () => publishPush(textPush('alice', newJobId(), 1)), 600_000)();
    expect(publisher.stats()).toMatchObject({ published: 1, inFlight: 1, dropped: 0 });
    finishSlow();
    await slow;
    expect(publisher.stats()).toMatchObject({ published: 1, inFlight: 0, queued: 0, dropped: 1 });
  });
});

describe('ensureStreamPublisher', () => {
  it('builds the environment\'s publisher when none is registered, and never replaces a registered one', () => {
    use(NO_STREAM_PUBLISHER);
    expect(ensureStreamPublisher({})).toBe(NO_STREAM_PUBLISHER);
    const built = ensureStreamPublisher({ REALTIME_HTTP_ENDPOINT: 'https://x.appsync-api.eu-west-1.amazonaws.com/event', AWS_REGION: 'eu-west-1' });
    expect(built).toBeInstanceOf(HttpStreamPublisher);
    expect(streamPublisher()).toBe(built);
    expect(ensureStreamPublisher({ REALTIME_HTTP_ENDPOINT: 'https://y.appsync-api.eu-west-1.amazonaws.com/event', AWS_REGION: 'eu-west-1' })).toBe(built);
  });
});
