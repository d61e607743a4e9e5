/**
 * Nothing stays open because a queue lost its message: overdue retries and queued jobs nobody picked up are
 * re-enqueued with a new deduplication id in a message group of their own (so they do not wait behind the
 * hidden original), and fail with a clear code if that also leads nowhere. The reaper's queries use indexes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { getSqlPool } from '../../lib/db/sql-pool.ts';
import { DEFAULT_REAPER_OPTIONS, lostRetryCutoff, reapOverdueRetries, type ReaperOptions } from '../../lib/engine/reaper.ts';
import { QUEUED_NOT_PICKED_UP, reapUnpickedQueuedJobs } from '../../lib/engine/reaper-queued.ts';
import { runDispatchCycle } from '../../lib/outbox/dispatcher.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

const db = getPrisma();
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ registry: testRegistry() });
});
afterAll(async () => h.close());

/** Takes every visible message off the queue for a minute: as far as the engine can tell, they are lost. */
async function loseMessages(): Promise<number> {
  const { Messages = [] } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60, WaitTimeSeconds: 2 }));
  return Messages.length;
}

const at = (msFromNow: number): ReaperOptions => ({
  ...DEFAULT_REAPER_OPTIONS, graceMs: 0, overdueRetryMs: 0, queuedBoundMs: { interactive: 0, background: 0 }, now: new Date(Date.now() + msFromNow),
});

describe('overdue retries', () => {
  it('are re-enqueued past their due time and run, even with the original message hidden in the same group', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: `overdue [scenario:fail_once:${Date.now()}]` } });
    await h.deliver(); // attempt 1 fails retryably; its retry is due 100 ms later
    const released = await db.aiJob.findUniqueOrThrow({ where: { id: created.id } });
    expect(released).toMatchObject({ lifecycleStatus: 'running', lockedBy: null });
    expect(await loseMessages()).toBe(1);
    expect(await reapOverdueRetries(db, at(-60_000))).toMatchObject({ reenqueued: 0 }); // not due yet a minute ago
    expect(await reapOverdueRetries(db, at(1_000))).toMatchObject({ reenqueued: 1 });
    const done = await h.runUntilTerminal(created.id);
    expect(done).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 2 });
  });
});

describe('a retry\'s bound before it counts as lost', () => {
  it('is its queue\'s bound for a first delivery, never less than the overdue bound', () => {
    const now = new Date('2026-12-01T12:00:00.000Z');
    const before = (ms: number) => new Date(now.getTime() - ms);
    expect(lostRetryCutoff({ queueName: 'background' }, DEFAULT_REAPER_OPTIONS, now)).toEqual(before(30 * 60_000));
    expect(lostRetryCutoff({ queueName: 'interactive' }, DEFAULT_REAPER_OPTIONS, now)).toEqual(before(5 * 60_000));
    const short = { ...DEFAULT_REAPER_OPTIONS, queuedBoundMs: { interactive: 1_000, background: 1_000 } };
    expect(lostRetryCutoff({ queueName: 'interactive' }, short, now)).toEqual(before(60_000));
    expect(lostRetryCutoff({ queueName: 'no-such-queue' }, DEFAULT_REAPER_OPTIONS, now)).toEqual(before(60_000));
  });
});

describe('queued jobs nobody picked up', () => {
  it('are re-enqueued with a new deduplication id and run', async () => {
    const created = await h.create({ input: { prompt: 'lost before anyone saw it' } });
    expect(await loseMessages()).toBe(1);
    expect(await reapUnpickedQueuedJobs(db, at(1_000))).toMatchObject({ reenqueued: 1 });
    expect(await db.outboxEvent.count({ where: { dedupeKey: `ai.job.enqueue:${created.id}:attempt-1` } })).toBe(1);
    expect((await h.runUntilTerminal(created.id)).lifecycleStatus).toBe('succeeded');
  });

  it('fail with QUEUED_NOT_PICKED_UP when the re-enqueue is lost too', async () => {
    const created = await h.create({ input: { prompt: 'lost twice' } });
    await loseMessages();
    await reapUnpickedQueuedJobs(db, at(1_000));
    await runDispatchCycle(h.dispatcher);
    expect(await loseMessages()).toBe(1);
    expect(await reapUnpickedQueuedJobs(db, at(2_000))).toMatchObject({ failed: 1 });
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'failed', errorCode: QUEUED_NOT_PICKED_UP });
  });

  it('are left alone within their bound', async () => {
    await h.create({ input: { prompt: 'just waiting' } });
    expect(await reapUnpickedQueuedJobs(db, DEFAULT_REAPER_OPTIONS)).toMatchObject({ reenqueued: 0, failed: 0 });
  });
});

describe('the reaper when nothing is stuck', () => {
  it('reads through indexes only (no full scan of AiJob)', async () => {
    const cutoff = new Date();
    const plans = await Promise.all([
      "SELECT id FROM AiJob WHERE lifecycleStatus = 'running' AND lockedBy IS NOT NULL AND lockUntil < ? ORDER BY lockUntil LIMIT 200",
      "SELECT id FROM AiJob WHERE lifecycleStatus = 'running' AND lockedBy IS NULL AND (lockUntil < ? OR (lockUntil IS NULL AND updatedAt < ?)) ORDER BY lockUntil LIMIT 200",
      "SELECT id FROM AiJob WHERE queueName = 'interactive' AND lifecycleStatus = 'queued' AND createdAt < ? ORDER BY createdAt LIMIT 200",
    ].map((sql) => getSqlPool().query(`EXPLAIN ${sql}`, [cutoff, cutoff]) as Promise<{ type: string; key: string | null }[]>));
    for (const [plan] of plans) {
      expect(plan!.type).not.toBe('ALL');
      expect(plan!.key).not.toBeNull();
    }
  });
});
