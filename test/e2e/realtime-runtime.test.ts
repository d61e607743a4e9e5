/**
 * `npm start`'s runtime serves realtime push: a hub on loopback that accepts the runtime's own tokens, and
 * REALTIME_HTTP_ENDPOINT pointed at it, so the publisher the functions build from their environment reaches a
 * client subscribed with the project's client library (the path a job's stream entries take locally).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRealtimeClient } from '../../lib/client/realtime-client.ts';
import { REALTIME_ENDPOINT_ENV, streamPublisherFromEnv } from '../../lib/realtime/publisher-from-env.ts';
import type { StreamPush } from '../../lib/stream/protocol.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';
import { channelFor, newJobId, textPush, waitUntil } from '../realtime/realtime-fixture.ts';

let e2e: E2e;
beforeAll(async () => { e2e = await startE2e(); }, 60_000);
afterAll(() => e2e?.stop());

describe('realtime push on the local runtime', () => {
  it('points publishers at its hub, which delivers to a subscriber holding a runtime token', async () => {
    const realtime = e2e.runtime.realtime!;
    expect(process.env[REALTIME_ENDPOINT_ENV]).toBe(realtime.httpEndpoint);
    expect(realtime.realtimeUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/event\/realtime$/);
    const jobId = newJobId();
    const got: StreamPush[] = [];
    const live = waitUntil(() => true);
    const received = waitUntil(() => got.length === 1);
    const client = createRealtimeClient({ httpEndpoint: realtime.httpEndpoint, getToken: () => e2e.token('alice') });
    client.subscribe(channelFor('alice', jobId), { onSubscribed: live.tick, onPush: (p) => { got.push(p); received.tick(); } });
    await live.promise;
    const publisher = streamPublisherFromEnv();
    publisher.publish(textPush('alice', jobId, 1));
    await received.promise;
    await publisher.flush(5_000);
    client.close();
    expect(got).toEqual([textPush('alice', jobId, 1)]);
  });
});
