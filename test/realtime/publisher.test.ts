/**
 * The realtime publisher is a hint that never fails or slows a job: with the hub stopped (connection refused) or
 * hung (accepts, never answers), `publish` returns at once, `flush` returns within its bound with nothing left in
 * flight, nothing throws, and every loss is counted and reported. With the hub up, a job's pushes arrive in `seq`
 * order, split into events and requests within the service's limits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/config/aws.ts';
import { createRealtimeClient } from '../../lib/client/realtime-client.ts';
import { pushToRequests } from '../../lib/realtime/push-events.ts';
import {
  PUBLISH_DROPPED_METRIC, PUBLISH_FAILED_METRIC, problemReporter, streamPublisherFromEnv,
} from '../../lib/realtime/publisher-from-env.ts';
import { HttpStreamPublisher, type PublishProblem } from '../../lib/realtime/publisher.ts';
import { createEventsSigner } from '../../lib/realtime/sigv4.ts';
import { NO_STREAM_PUBLISHER, type StreamPush } from '../../lib/stream/protocol.ts';
import { inPublishScope } from '../../lib/stream/publish-scope.ts';
import { silentEndpoint } from '../helpers/ports.ts';
import { CREDENTIALS, REGION, channelFor, holdingEndpoint, newJobId, startTestHub, textPush, waitUntil, type TestHub } from './realtime-fixture.ts';

const signer = createEventsSigner(REGION, CREDENTIALS);
const publisherAt = (httpEndpoint: string, o: Partial<ConstructorParameters<typeof HttpStreamPublisher>[0]> = {}) => {
  const problems: PublishProblem[] = [];
  const publisher = new HttpStreamPublisher({ httpEndpoint, sign: signer, report: (p) => problems.push(p), ...o });
  return { publisher, problems };
};

describe('with the realtime service unreachable', () => {
  it('connection refused: publish returns at once, flush returns, the failure is counted, nothing throws', async () => {
    const t = await startTestHub();
    const endpoint = t.hub.httpEndpoint;
    await t.stop();
    const { publisher, problems } = publisherAt(endpoint);
    publisher.publish(textPush('alice', newJobId(), 1));
    expect(publisher.stats()).toMatchObject({ queued: 1, inFlight: 0, published: 0 }); // handed off, not awaited
    await Promise.resolve();
    expect(publisher.stats()).toMatchObject({ queued: 0, inFlight: 1 }); // started a microtask later
    await publisher.flush(10_000);
    expect(publisher.stats()).toMatchObject({ failed: 1, inFlight: 0, queued: 0 });
    expect(problems).toEqual([expect.objectContaining({ kind: 'failed', reason: 'network', events: 1 })]);
  });

  it('an endpoint that never answers: each request gives up at its timeout and is counted', async () => {
    const silent = await silentEndpoint();
    try {
      const { publisher, problems } = publisherAt(`${silent.url}/event`, { timeoutMs: 200 });
      publisher.publish(textPush('alice', newJobId(), 1));
      const started = Date.now();
      await publisher.flush(30_000);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(publisher.stats()).toMatchObject({ failed: 1, inFlight: 0 });
      expect(problems).toEqual([expect.objectContaining({ kind: 'failed', reason: 'timeout' })]);
    } finally {
      await silent.close();
    }
  });

  it('flush returns within its bound even when requests would run longer, abandoning and counting them', async () => {
    const silent = await silentEndpoint();
    try {
      const { publisher, problems } = publisherAt(`${silent.url}/event`, { timeoutMs: 60_000 });
      for (const jobId of [newJobId(), newJobId()]) publisher.publish(textPush('alice', jobId, 1));
      const started = Date.now();
      await publisher.flush(100);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(publisher.stats()).toMatchObject({ inFlight: 0, queued: 0, dropped: 2, failed: 0 });
      expect(problems.map((p) => p.kind === 'dropped' && p.reason)).toEqual(['flush-timeout', 'flush-timeout']);
    } finally {
      await silent.close();
    }
  });

  it('flushes a publish scope\'s own requests only: another scope\'s request is neither waited for nor abandoned', async () => {
    const slowJob = newJobId();
    const held = await holdingEndpoint(slowJob);
    try {
      const { publisher, problems } = publisherAt(`${held.url}/event`, { timeoutMs: 60_000 });
      let finishB!: () => void;
      const bMayFlush = new Promise<void>((resolve) => (finishB = resolve));
      // Invocation B publishes to a job whose requests the service holds (its channel names the job), and flushes later.
      const b = inPublishScope(async () => {
        publisher.publish(textPush('alice', slowJob, 1));
        await bMayFlush;
        await publisher.flush(100);
      });
      await held.arrived;
      // Invocation A, meanwhile: its flush returns once its own request is answered, however long its bound.
      await inPublishScope(async () => {
        publisher.publish(textPush('alice', newJobId(), 1));
        await publisher.flush(600_000);
      });
      expect(publisher.stats()).toMatchObject({ published: 1, inFlight: 1, dropped: 0 });
      expect(problems).toEqual([]);
      // B's flush, at its bound, abandons B's request: the one still held.
      finishB();
      await b;
      expect(publisher.stats()).toMatchObject({ published: 1, inFlight: 0, queued: 0, dropped: 1 });
      expect(problems).toEqual([{ kind: 'dropped', jobId: slowJob, reason: 'flush-timeout', count: 1 }]);
    } finally {
      await held.close();
    }
  });

  it('bounds what waits: beyond maxInFlight + maxQueued a push is dropped and counted, never buffered without limit', async () => {
    const silent = await silentEndpoint();
    try {
      const { publisher, problems } = publisherAt(`${silent.url}/event`, { maxInFlight: 2, maxQueued: 3, timeoutMs: 60_000 });
      for (let i = 0; i < 10; i += 1) publisher.publish(textPush('alice', newJobId(), 1));
      await Promise.resolve();
      expect(publisher.stats()).toMatchObject({ inFlight: 2, queued: 3, dropped: 5 });
      expect(problems.filter((p) => p.kind === 'dropped' && p.reason === 'queue-full')).toHaveLength(5);
      await publisher.flush(50);
      expect(publisher.stats()).toMatchObject({ inFlight: 0, queued: 0 });
    } finally {
      await silent.close();
    }
  });

  it('never throws on a push it cannot address (not a job id), and counts it', () => {
    const { publisher, problems } = publisherAt('http://127.0.0.1:9/event');
    expect(() => publisher.publish({ userId: 'alice', jobId: 'not a job', entries: [] })).not.toThrow();
    expect(() => publisher.publish(null as unknown as StreamPush)).not.toThrow();
    expect(problems.map((p) => p.kind === 'dropped' && p.reason)).toEqual(['bad-channel', 'bad-channel']);
  });
});

describe('with the hub up', () => {
  let t: TestHub;
  beforeAll(async () => { t = await startTestHub(); });
  afterAll(() => t.stop());

  it("delivers a job's pushes in seq order, split into events and requests within the limits", async () => {
    const jobId = newJobId();
    const seqs: number[] = [];
    let pushes = 0;
    const done = waitUntil(() => seqs.length === 120);
    const subscribed = waitUntil(() => true);
    const client = createRealtimeClient({ httpEndpoint: t.hub.httpEndpoint, getToken: () => t.token('alice') });
    client.subscribe(channelFor('alice', jobId), {
      onSubscribed: subscribed.tick,
      onPush: (push) => {
        pushes += 1;
        seqs.push(...push.entries.map((e) => e.seq));
        done.tick();
      },
    });
    await subscribed.promise;
    const publisher = t.publisher({ maxEventBytes: 1_000 });
    const sent = [1, 21, 41, 61, 81, 101].map((first) => textPush('alice', jobId, first, 20, 'x'.repeat(100)));
    for (const push of sent) publisher.publish(push);
    await done.promise;
    client.close();
    expect(seqs).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    await publisher.flush(5_000);
    const batches = sent.map((push) => pushToRequests(push, 1_000).requests);
    expect(pushes).toBe(batches.flat(2).length); // one data message per event
    expect(pushes).toBeGreaterThan(sent.length);
    expect(publisher.stats()).toMatchObject({ failed: 0, dropped: 0 });
    // Requests that waited behind the job's request in flight were joined (at most 5 events each).
    expect(publisher.stats().published).toBeGreaterThanOrEqual(Math.ceil(batches.flat(2).length / 5));
    expect(publisher.stats().published).toBeLessThanOrEqual(batches.flat(1).length);
  });

  /** A subscriber to alice's job `jobId` that collects the `seq`s pushed to it; `done` once `count` arrived. */
  async function collectSeqs(jobId: string, count: number) {
    const seqs: number[] = [];
    const done = waitUntil(() => seqs.length === count);
    const subscribed = waitUntil(() => true);
    const client = createRealtimeClient({ httpEndpoint: t.hub.httpEndpoint, getToken: () => t.token('alice') });
    client.subscribe(channelFor('alice', jobId), {
      onSubscribed: subscribed.tick,
      onPush: (push) => {
        seqs.push(...push.entries.map((e) => e.seq));
        done.tick();
      },
    });
    await subscribed.promise;
    return { seqs, done: done.promise, client };
  }

  it("joins a job's pushes made while its request is in flight into one request, in seq order", async () => {
    const jobId = newJobId();
    const { seqs, done, client } = await collectSeqs(jobId, 4);
    const publisher = t.publisher();
    const other = newJobId();
    publisher.publish(textPush('alice', jobId, 1));
    await Promise.resolve(); // seq 1 is in flight
    for (const seq of [2, 3, 4]) {
      publisher.publish(textPush('alice', jobId, seq));
      if (seq === 2) publisher.publish(textPush('alice', other, 1));
    }
    await Promise.resolve();
    expect(publisher.stats()).toMatchObject({ inFlight: 2, queued: 1 }); // seq 1 and the other job's run; 2–4 wait as one
    await done;
    client.close();
    await publisher.flush(5_000);
    expect(seqs).toEqual([1, 2, 3, 4]);
    expect(publisher.stats()).toMatchObject({ published: 3, failed: 0, dropped: 0 });
  });

  it("sends a job's pushes made together (a last batch and its succeeded entry) as one request", async () => {
    const jobId = newJobId();
    const { seqs, done, client } = await collectSeqs(jobId, 3);
    const publisher = t.publisher();
    publisher.publish(textPush('alice', jobId, 1, 2));
    publisher.publish(textPush('alice', jobId, 3));
    await done;
    client.close();
    await publisher.flush(5_000);
    expect(seqs).toEqual([1, 2, 3]);
    expect(publisher.stats()).toMatchObject({ published: 1, failed: 0, dropped: 0 });
  });

  it('answers a request the service rejects (wrong key) as a counted failure with its status and error type', async () => {
    const { publisher, problems } = publisherAt(t.hub.httpEndpoint, { sign: createEventsSigner(REGION, { ...CREDENTIALS, secretAccessKey: 'wrong' }) });
    publisher.publish(textPush('alice', newJobId(), 1));
    await publisher.flush(5_000);
    expect(problems).toEqual([expect.objectContaining({ kind: 'failed', reason: 'http', status: 401, errorType: 'UnauthorizedException' })]);
  });
});

describe('pushToRequests', () => {
  it('packs entries into events under the size limit and events into requests of at most 5', () => {
    const push = textPush('alice', newJobId(), 1, 30, 'y'.repeat(200));
    const { requests, oversized } = pushToRequests(push, 1_000);
    expect(oversized).toBe(0);
    expect(requests.every((r) => r.length >= 1 && r.length <= 5)).toBe(true);
    const events = requests.flat();
    expect(events.every((e) => Buffer.byteLength(e) <= 1_000)).toBe(true);
    const parsed = events.map((e) => JSON.parse(e) as StreamPush);
    expect(parsed.every((p) => p.userId === 'alice' && p.jobId === push.jobId)).toBe(true);
    expect(parsed.flatMap((p) => p.entries)).toEqual(push.entries);
  });

  it('leaves out an entry too large for any event, and counts it', () => {
    const push = textPush('alice', newJobId(), 1, 3);
    push.entries[1] = { ...push.entries[1]!, type: 'text', field: 'feedback', delta: 'z'.repeat(5_000) } as never;
    const { requests, oversized } = pushToRequests(push, 1_000);
    expect(oversized).toBe(1);
    expect(requests.flat().flatMap((e) => (JSON.parse(e) as StreamPush).entries.map((x) => x.seq))).toEqual([1, 3]);
  });
});

describe('configuration', () => {
  it('is NO_STREAM_PUBLISHER without an endpoint, and refuses a malformed one', () => {
    expect(streamPublisherFromEnv({})).toBe(NO_STREAM_PUBLISHER);
    expect(streamPublisherFromEnv({ REALTIME_HTTP_ENDPOINT: '  ' })).toBe(NO_STREAM_PUBLISHER);
    expect(() => streamPublisherFromEnv({ REALTIME_HTTP_ENDPOINT: 'ftp://x/event', AWS_REGION: 'eu-west-1' })).toThrow(ConfigurationError);
    expect(() => streamPublisherFromEnv({ REALTIME_HTTP_ENDPOINT: 'https://x.appsync-api.eu-west-1.amazonaws.com/event' })).toThrow(ConfigurationError);
    expect(streamPublisherFromEnv({ REALTIME_HTTP_ENDPOINT: 'https://x.appsync-api.eu-west-1.amazonaws.com/event', AWS_REGION: 'eu-west-1' }))
      .toBeInstanceOf(HttpStreamPublisher);
  });

  it('turns problems into EMF metrics on flush and throttled log lines without payload', () => {
    const metrics: [string, number][] = [];
    const lines: Record<string, unknown>[] = [];
    let published = 0;
    const reporter = problemReporter(
      { warn: (_: string, extra: Record<string, unknown>) => lines.push(extra) } as never,
      { addMetric: (name: string, _unit: string, value: number) => metrics.push([name, value]), publishStoredMetrics: () => { published += 1; } } as never,
    );
    reporter.report({ kind: 'failed', jobId: 'J', reason: 'timeout', events: 3 });
    reporter.report({ kind: 'dropped', jobId: 'J', reason: 'queue-full', count: 2 });
    reporter.publish();
    reporter.publish(); // nothing new: nothing published
    expect(metrics).toEqual([[PUBLISH_FAILED_METRIC, 3], [PUBLISH_DROPPED_METRIC, 2]]);
    expect(published).toBe(1);
    expect(lines).toEqual([{ kind: 'failed', jobId: 'J', reason: 'timeout', events: 3, problemsSinceLastLine: 1 }]);
  });
});
