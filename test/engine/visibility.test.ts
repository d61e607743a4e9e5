/** A long job keeps its SQS message invisible: the heartbeat extends the visibility, so SQS does not redeliver it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { waitFor } from '../helpers/ports.ts';

const VISIBILITY_SECONDS = 1;

let h: EngineHarness;
beforeAll(async () => {
  // Messages become visible again after 1 s unless the consumer extends them; the heartbeat runs every 300 ms.
  h = await startEngineHarness({ visibilityTimeoutSeconds: VISIBILITY_SECONDS, timing: { leaseMs: 3_000, heartbeatMs: 300, cancelPollMs: 100 } });
});
afterAll(async () => h.close());

describe('visibility', () => {
  it('is extended while the job runs longer than the queue visibility timeout', async () => {
    const created = await h.create({ input: { prompt: 'long job', scenario: 'slow:6000' } });
    const job = () => getPrisma().aiJob.findUniqueOrThrow({ where: { id: created.id } });
    const delivery = h.deliver();
    await waitFor(async () => (await job()).lockUntil !== null, 'the lease');
    const { lockedAt, lockUntil: first } = await job();
    // Two heartbeats: ticks never overlap, so the first one's visibility change has returned by the second's.
    let extensions = 0;
    let last = first!;
    await waitFor(async () => {
      const now = (await job()).lockUntil!;
      if (now > last) [extensions, last] = [extensions + 1, now];
      return extensions >= 2;
    }, 'two heartbeats');
    // The message was received before the lease was taken: its first visibility has surely run out by now.
    await waitFor(async () => Date.now() > lockedAt!.getTime() + VISIBILITY_SECONDS * 1000 + 200, 'the first visibility timeout to pass');
    expect((await job()).lifecycleStatus).toBe('running');
    const peek = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, WaitTimeSeconds: 0, VisibilityTimeout: 1 }));
    expect(peek.Messages ?? []).toHaveLength(0);
    const { response } = await delivery;
    expect(response.batchItemFailures).toEqual([]);
    expect(await job()).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1 });
  });
});
