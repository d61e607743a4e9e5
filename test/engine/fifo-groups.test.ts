/**
 * FIFO partial batch responses: after a failed record, every later record of the same message group in the
 * batch is reported failed unprocessed (so SQS redelivers the group in order), while other groups of the
 * same batch run in parallel. Real fauxqs queues and MariaDB; the mock provider over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SQSRecord } from 'aws-lambda';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { consumeBatch } from '../../lib/engine/consumer.ts';
import { defineJob } from '../../lib/jobs/definition.ts';
import { encodeJobMessage } from '../../lib/queue/job-message.ts';
import { deleteAcknowledged } from '../../lib/dev/local-runtime/queue-poller.ts';
import { startEngineHarness, toSqsEvent, type EngineHarness } from '../helpers/engine-harness.ts';
import { quickRetryJob, testRegistry } from '../helpers/test-job-types.ts';
import { waitFor } from '../helpers/ports.ts';

/** quick_retry_job with one FIFO group per user: a user's jobs of this type run in order. */
const userOrderedJob = defineJob({ ...quickRetryJob, jobType: 'user_ordered_job', queue: { ...quickRetryJob.queue, messageGroup: 'user' } });

const db = getPrisma();
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ registry: testRegistry(userOrderedJob) });
});
afterAll(async () => h.close());

const jobOf = (id: string) => db.aiJob.findUniqueOrThrow({ where: { id } });

describe('a FIFO batch holding two records of one message group', () => {
  it('reports the later record of a failed group failed without running it, and runs other groups in parallel', async () => {
    // The first job of user A fails (500) after 5 s; its second job must wait for it. User B's job is independent.
    const a1 = await h.create({ jobType: 'user_ordered_job', userId: 'user-a', input: { prompt: 'a1', scenario: 'server_error', sleepMs: 5_000 } });
    const a2 = await h.create({ jobType: 'user_ordered_job', userId: 'user-a', input: { prompt: 'a2 second of user a' } });
    const b1 = await h.create({ jobType: 'user_ordered_job', userId: 'user-b', input: { prompt: 'b1' } });
    const queue = h.queues.interactive;
    const { Messages = [] } = await h.sqs.send(new ReceiveMessageCommand({
      QueueUrl: queue.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2, MessageSystemAttributeNames: ['All'],
    }));
    expect(Messages.map((m) => m.Attributes?.MessageGroupId)).toEqual(['user-a', 'user-b']);
    // fauxqs hands out one message per group per receive; Lambda's FIFO poller puts a group's next messages in
    // the same batch, in order. So the batch is the received records plus user A's second message, as sent.
    const [recordA1, recordB1] = toSqsEvent(Messages, queue.queueArn).Records as [SQSRecord, SQSRecord];
    const recordA2: SQSRecord = {
      ...recordA1, messageId: 'a2-message', receiptHandle: 'a2-receipt',
      body: encodeJobMessage({ jobId: a2.id, jobType: a2.jobType, idempotencyKey: `ai.job.enqueue:${a2.id}`, createdAt: a2.createdAt.toISOString() }),
    };
    const batch = consumeBatch({ Records: [recordA1, recordA2, recordB1] }, { queueUrl: queue.queueUrl, sqs: h.sqs, engine: h.engine });

    // User B's job finishes while user A's first job is still waiting on the provider: groups run in parallel.
    await waitFor(async () => (await jobOf(b1.id)).lifecycleStatus === 'succeeded', 'user B job to succeed');
    expect(await jobOf(a1.id)).toMatchObject({ lifecycleStatus: 'running', errorCode: null, lockedBy: h.engine.instanceId });

    const response = await batch;
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: recordA1.messageId }, { itemIdentifier: 'a2-message' }]);
    expect(await jobOf(a1.id)).toMatchObject({ lifecycleStatus: 'running', errorCode: 'PROVIDER_UNAVAILABLE', attemptCount: 1, lockedBy: null });
    // The skipped record never reached the engine: no lease, no attempt, no provider call.
    expect(await jobOf(a2.id)).toMatchObject({ lifecycleStatus: 'queued', attemptCount: 0, lockedBy: null });
    expect(h.mock.requests.some((r) => JSON.stringify(r.messages).includes('second of user a'))).toBe(false);
    await deleteAcknowledged(h.sqs, queue.queueUrl, Messages, response);
  });

  it('keeps one group in batch order when nothing fails', async () => {
    const first = await h.create({ jobType: 'user_ordered_job', userId: 'user-c', input: { prompt: 'c1', sleepMs: 300 } });
    const second = await h.create({ jobType: 'user_ordered_job', userId: 'user-c', input: { prompt: 'c2' } });
    const records = [first, second].map((job, i): SQSRecord => ({
      messageId: `c${i + 1}`, receiptHandle: `c${i + 1}-receipt`, md5OfBody: '', messageAttributes: {},
      body: encodeJobMessage({ jobId: job.id, jobType: job.jobType, idempotencyKey: `ai.job.enqueue:${job.id}`, createdAt: job.createdAt.toISOString() }),
      attributes: { MessageGroupId: 'user-c' } as SQSRecord['attributes'],
      eventSource: 'aws:sqs', eventSourceARN: h.queues.interactive.queueArn, awsRegion: 'us-east-1',
    }));
    const response = await consumeBatch({ Records: records }, { queueUrl: h.queues.interactive.queueUrl, sqs: h.sqs, engine: h.engine });
    expect(response.batchItemFailures).toEqual([]);
    const [one, two] = [await jobOf(first.id), await jobOf(second.id)];
    expect([one.lifecycleStatus, two.lifecycleStatus]).toEqual(['succeeded', 'succeeded']);
    // The second started only after the first had finished.
    expect(two.startedAt!.getTime()).toBeGreaterThanOrEqual(one.finishedAt!.getTime());
  });
});
