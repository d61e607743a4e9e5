/** A long job keeps its SQS message invisible: the heartbeat extends the visibility, so SQS does not redeliver it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';

let h: EngineHarness;
beforeAll(async () => {
  // Messages become visible again after 1 s unless the consumer extends them; the heartbeat runs every 300 ms.
  h = await startEngineHarness({ visibilityTimeoutSeconds: 1, timing: { leaseMs: 3_000, heartbeatMs: 300, cancelPollMs: 100 } });
});
afterAll(async () => h.close());

describe('visibility', () => {
  it('is extended while the job runs longer than the queue visibility timeout', async () => {
    const created = await h.create({ input: { prompt: 'long job', scenario: 'slow:2500' } });
    const delivery = h.deliver();
    await new Promise((r) => setTimeout(r, 1_800));
    // Past the 1 s visibility timeout: without the extension the message would be back on the queue now.
    const peek = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, WaitTimeSeconds: 0, VisibilityTimeout: 1 }));
    expect(peek.Messages ?? []).toHaveLength(0);
    const { response } = await delivery;
    expect(response.batchItemFailures).toEqual([]);
    expect(await getPrisma().aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1 });
  });
});
