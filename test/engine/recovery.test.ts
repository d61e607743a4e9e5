/** Correctness under duplicates, crashes, lost leases and broken projectors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { lockJob } from '../../lib/jobs/lifecycle-repository.ts';
import { runJob } from '../../lib/engine/run-job.ts';
import { DEFAULT_REAPER_OPTIONS, reapExpiredLeases, reapOverdueRetries } from '../../lib/engine/reaper.ts';
import { reapDeadLetters } from '../../lib/engine/dead-letters.ts';
import { runDispatchCycle } from '../../lib/outbox/dispatcher.ts';
import type { JobMessage } from '../../lib/queue/job-message.ts';
import type { ResultProjector } from '../../lib/jobs/projector.ts';
import { startEngineHarness, toSqsEvent, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';
import { transitionsOf } from '../helpers/factories.ts';
import { consumeBatch } from '../../lib/engine/consumer.ts';

const db = getPrisma();
let h: EngineHarness;
const registry = testRegistry();
beforeAll(async () => {
  h = await startEngineHarness({ registry, maxReceiveCount: 2 });
});
afterAll(async () => h.close());

function messageOf(job: { id: string; jobType: string; createdAt: Date }): JobMessage {
  return { jobId: job.id, jobType: job.jobType, idempotencyKey: `ai.job.enqueue:${job.id}`, createdAt: job.createdAt.toISOString() };
}

describe('duplicate deliveries', () => {
  it('projects once when the same message is processed twice concurrently', async () => {
    const created = await h.create({ input: { prompt: 'twice', scenario: 'slow:300' } });
    const calls = h.mock.requests.length;
    const outcomes = await Promise.all([runJob(messageOf(created), h.engine), runJob(messageOf(created), h.engine)]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['acknowledged', 'succeeded']);
    // The second delivery is turned away at the lock (same consumer, same instant: the unique (jobId, seq) of the
    // audit rows refuses its claim), so the provider is called once and the stream log has one segment.
    expect(h.mock.requests.length - calls).toBe(1);
    expect((await transitionsOf(created.id)).map((t) => [t.seq, t.toStatus])).toEqual([[1, 'queued'], [2, 'running'], [3, 'succeeded']]);
    expect(await db.aiJobArtifact.count({ where: { jobId: created.id } })).toBe(1);
    expect(await db.outboxEvent.count({ where: { aggregateId: created.id, eventType: 'ai.job.succeeded' } })).toBe(1);
  });
});

describe('leases', () => {
  it('a worker that lost its lease projects nothing', async () => {
    const created = await h.create({ input: { prompt: 'steal me', scenario: 'slow:800' } });
    const running = runJob(messageOf(created), h.engine);
    // While the first worker waits on the provider, its lease is taken over (as after an expiry).
    for (let i = 0; i < 100 && (await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).lifecycleStatus !== 'running'; i += 1) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await db.aiJob.update({ where: { id: created.id }, data: { lockUntil: new Date(Date.now() - 1000) } });
    const thief = await lockJob(db, created.id, 'thief');
    expect(await running).toEqual({ kind: 'acknowledged', jobId: created.id, reason: 'lease_lost' });
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'running', lockedBy: 'thief', leaseVersion: thief.leaseVersion });
    expect(await db.aiJobArtifact.count({ where: { jobId: created.id } })).toBe(0);
  });

  it('recovers a job whose consumer crashed mid-run: the reaper releases and re-enqueues it, it completes once', async () => {
    const created = await h.create({ input: { prompt: 'crash' } });
    // The crashed consumer: took the lease and the message, then died (the message stays in flight).
    await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, VisibilityTimeout: 30, WaitTimeSeconds: 1 }));
    await lockJob(db, created.id, 'crashed-consumer', { leaseMs: 10 });
    await new Promise((r) => setTimeout(r, 50));
    const reaped = await reapExpiredLeases(db, { ...DEFAULT_REAPER_OPTIONS, graceMs: 0, overdueRetryMs: 0, limit: 10 });
    expect(reaped).toMatchObject({ released: 1, reenqueued: 1 });
    await runDispatchCycle(h.dispatcher);
    await h.deliver();
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 2 });
    expect(await db.aiJobArtifact.count({ where: { jobId: created.id } })).toBe(1);
    // The crashed delivery's message coming back later is a harmless duplicate.
    expect(await runJob(messageOf(created), h.engine)).toMatchObject({ kind: 'acknowledged', reason: 'terminal' });
  });

  it('fails with LEASE_EXPIRED when the crash happened on the last attempt', async () => {
    const created = await h.create({ input: { prompt: 'last crash' } });
    await db.aiJob.update({ where: { id: created.id }, data: { maxAttempts: 1 } });
    await lockJob(db, created.id, 'crashed-consumer', { leaseMs: 10 });
    await new Promise((r) => setTimeout(r, 50));
    await reapExpiredLeases(db, { ...DEFAULT_REAPER_OPTIONS, graceMs: 0, overdueRetryMs: 0, limit: 10 });
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'LEASE_EXPIRED' });
  });

  it('re-enqueues a released job whose retry is overdue, once, then fails it once its queue\'s bound has passed', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'lost', scenario: 'server_error' } });
    await h.deliver(); // attempt 1 fails retryably: lease released, message due again after the backoff
    await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, VisibilityTimeout: 60, WaitTimeSeconds: 2 })); // "lost"
    const later = { ...DEFAULT_REAPER_OPTIONS, graceMs: 0, overdueRetryMs: 0, limit: 10, now: new Date(Date.now() + 60_000) };
    expect(await reapOverdueRetries(db, later)).toMatchObject({ reenqueued: 1 });
    expect(await db.outboxEvent.count({ where: { dedupeKey: `ai.job.enqueue:${created.id}:attempt-2` } })).toBe(1);
    await runDispatchCycle(h.dispatcher); // the re-enqueue is published (and, in this test, lost again)
    // Two minutes on, the re-enqueue may just be waiting its turn in a backlog: the interactive queue gives a
    // message 5 minutes (DEFAULT_REAPER_OPTIONS.queuedBoundMs), as it gives a new job's first delivery.
    const backlogged = { ...later, now: new Date(Date.now() + 120_000) };
    expect(await reapOverdueRetries(db, backlogged)).toMatchObject({ reenqueued: 0, failed: 0 });
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'running', lockedBy: null });
    const pastTheBound = { ...later, now: new Date(Date.now() + DEFAULT_REAPER_OPTIONS.queuedBoundMs.interactive + 1_000) };
    expect(await reapOverdueRetries(db, pastTheBound)).toMatchObject({ failed: 1 });
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'LEASE_EXPIRED' });
  });
});

describe('projection', () => {
  it('rolls back every row when the projector fails, and goes through the retry policy', async () => {
    const failing: ResultProjector = {
      key: 'synthetic',
      async project(tx, job) {
        await tx.feynmanEvaluation.create({ data: { id: job.id, jobId: job.id, userId: job.userId, concept: 'x', score: 1, gaps: [], feedback: 'f' } });
        throw new Error('projector exploded after writing a row');
      },
    };
    const engine = { ...h.engine, projectors: { get: () => failing } };
    const created = await h.create({ input: { prompt: 'rollback' } });
    const outcome = await runJob(messageOf(created), engine);
    expect(outcome).toMatchObject({ kind: 'retry', code: 'INTERNAL' });
    expect(await db.feynmanEvaluation.count({ where: { jobId: created.id } })).toBe(0);
    expect(await db.aiJobArtifact.count({ where: { jobId: created.id } })).toBe(0);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'running', lockedBy: null, errorCode: 'INTERNAL' });
    // INTERNAL is retried once: the second failure ends the job.
    expect(await runJob(messageOf(created), engine)).toMatchObject({ kind: 'failed', code: 'INTERNAL' });
  });
});

describe('poison and dead-lettered messages', () => {
  it('reports a malformed body as a failure without failing the rest of the batch', async () => {
    const good = await h.create({ input: { prompt: 'neighbour' } });
    await h.sqs.send(new SendMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, MessageBody: '{"not":"a job"}', MessageGroupId: 'poison', MessageDeduplicationId: `poison-${good.id}` }));
    const { Messages = [] } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    const poison = Messages.find((m) => m.Body?.includes('"not"'));
    const neighbour = Messages.find((m) => m.Body?.includes(good.id));
    expect(poison && neighbour).toBeTruthy();
    const response = await consumeBatch(toSqsEvent(Messages, h.queues.interactive.queueArn), { queueUrl: h.queues.interactive.queueUrl, sqs: h.sqs, engine: h.engine });
    const failed = response.batchItemFailures.map((f) => f.itemIdentifier);
    expect(failed).toContain(poison?.MessageId);
    expect(failed).not.toContain(neighbour?.MessageId);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: good.id } })).toMatchObject({ lifecycleStatus: 'succeeded' });
  });

  it('fails a job whose message reached the dead-letter queue with DEAD_LETTERED, keeping the message there', async () => {
    const created = await h.create({ input: { prompt: 'doomed' } });
    // Two receives without a delete (maxReceiveCount 2) move the message to the DLQ.
    for (let i = 0; i < 4; i += 1) {
      await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0, WaitTimeSeconds: 1 }));
    }
    const counts = await reapDeadLetters(db, { sqs: h.sqs, deadLetterQueueUrls: [h.queues.interactive.deadLetterQueueUrl], hideSeconds: 1 });
    expect(counts.failed).toBe(1);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'DEAD_LETTERED' });
    await new Promise((r) => setTimeout(r, 1100));
    const again = await reapDeadLetters(db, { sqs: h.sqs, deadLetterQueueUrls: [h.queues.interactive.deadLetterQueueUrl], hideSeconds: 1 });
    expect(again.failed).toBe(0);
    expect(again.alreadyFinished).toBeGreaterThanOrEqual(1);
  });
});
