/**
 * What the dispatcher does when things go wrong: an unreachable or hanging queue, one bad entry in a
 * batch, an event type nobody routes (crashes between claim and send: claim-crashes.test.ts). Real MariaDB and fauxqs; time moves through the
 * dispatcher's injected clock, never by sleeping.
 */
import { describe, expect, it } from 'vitest';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { getSqlPool } from '../../lib/db/sql-pool.ts';
import { runDispatchCycle } from '../../lib/outbox/dispatcher.ts';
import { parseJobMessage } from '../../lib/queue/job-message.ts';
import { insertJob, transitionsOf } from '../helpers/factories.ts';
import { freePort, silentEndpoint } from '../helpers/ports.ts';
import {
  createTestQueues, drainQueue, enqueueRowFor, insertEnqueueEvent, movableClock, outboxRows, testDispatcherDeps, testSqsClient,
} from '../helpers/outbox-factories.ts';

/** Counts SendMessageBatch calls a client makes (SDK middleware, not our code). */
function countSends(sqs: SQSClient): { calls: number } {
  const counter = { calls: 0 };
  sqs.middlewareStack.add((next) => async (args) => {
    counter.calls += 1;
    return next(args);
  }, { step: 'initialize' });
  return counter;
}

describe('dispatcher failures', () => {
  it('backs off while the queue is unreachable, then after 3 attempts marks the row dead and fails the job with DISPATCH_FAILED', async () => {
    const unreachable = testSqsClient(`http://127.0.0.1:${await freePort()}`);
    const job = await insertJob();
    const row = await insertEnqueueEvent(job);
    const clock = movableClock();
    const deps = testDispatcherDeps({
      queueUrls: { interactive: 'http://127.0.0.1:1/000000000000/nowhere.fifo', background: 'unused' },
      sqs: unreachable, policy: { now: clock.now },
    });

    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, retried: 1 });
    let [stored] = await outboxRows([row.id]);
    expect(stored).toMatchObject({ status: 'pending', attemptCount: 1, lockedBy: null });
    expect(stored?.lastError).toMatch(/ECONNREFUSED|connect/i);
    expect(stored!.availableAt.getTime() - clock.now().getTime()).toBeGreaterThan(4_000);

    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 0 }); // still backing off
    clock.advance(5_000);
    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, retried: 1 });
    [stored] = await outboxRows([row.id]);
    expect(stored).toMatchObject({ status: 'pending', attemptCount: 2 });
    expect(stored!.availableAt.getTime() - clock.now().getTime()).toBeGreaterThan(59_000); // then a minute

    clock.advance(60_000);
    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, dead: 1, retried: 0 });
    [stored] = await outboxRows([row.id]);
    expect(stored).toMatchObject({ status: 'dead', attemptCount: 3 });
    expect(stored?.lastError).toMatch(/^DISPATCH_FAILED: /);

    const failed = await getPrisma().aiJob.findUniqueOrThrow({ where: { id: job.id } });
    expect(failed).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'DISPATCH_FAILED' });
    expect((await transitionsOf(job.id)).at(-1)).toMatchObject({ fromStatus: 'queued', toStatus: 'failed', actor: 'dispatcher' });
    // The terminal transition announced itself in the same transaction.
    const events = await getPrisma().outboxEvent.findMany({ where: { aggregateId: job.id, eventType: 'ai.job.failed' } });
    expect(events).toHaveLength(1);
    expect(deps.logger.records.some((r) => r.level === 'error' && r.message.includes('dead'))).toBe(true);
  });

  it('counts sends to an endpoint that hangs as failed attempts (aborted after the cycle budget): dead after 3', async () => {
    const hung = await silentEndpoint();
    try {
      const job = await insertJob();
      const row = await insertEnqueueEvent(job);
      const clock = movableClock();
      const deps = testDispatcherDeps({
        queueUrls: { interactive: `${hung.url}/000000000000/hangs.fifo`, background: 'unused' },
        sqs: testSqsClient(hung.url), policy: { now: clock.now, sendTimeoutMs: 200 },
      });

      // Without the budget the first cycle never returns (no SDK request timeout): the test would time out.
      expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, retried: 1 });
      const [stored] = await outboxRows([row.id]);
      expect(stored).toMatchObject({ status: 'pending', attemptCount: 1, lockedBy: null });
      expect(stored?.lastError).toMatch(/budget|abort/i);
      clock.advance(5_000);
      expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, retried: 1 });
      clock.advance(60_000);
      expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, dead: 1 });
      expect(await getPrisma().aiJob.findUniqueOrThrow({ where: { id: job.id } })).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'DISPATCH_FAILED' });
    } finally {
      await hung.close();
    }
  });

  it('retries only the entry SQS rejects in a batch; the others are published', async () => {
    const { queueUrls } = await createTestQueues();
    const good = [await insertJob(), await insertJob()];
    // U+FFFF is outside the characters SQS accepts in a body: SendMessageBatch fails that entry alone.
    const bad = await insertJob({ jobType: 'synthetic_job\uffff' });
    for (const job of [good[0]!, bad, good[1]!]) await insertEnqueueEvent(job);
    const deps = testDispatcherDeps({ queueUrls });

    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 3, published: 2, retried: 1 });

    const rows = await getPrisma().outboxEvent.findMany({ where: { eventType: 'ai.job.enqueue' } });
    const byJob = new Map(rows.map((r) => [r.aggregateId, r]));
    expect(byJob.get(bad.id)).toMatchObject({ status: 'pending', attemptCount: 1 });
    expect(byJob.get(bad.id)?.lastError).toMatch(/InvalidMessageContents/);
    for (const job of good) expect(byJob.get(job.id)).toMatchObject({ status: 'published', attemptCount: 0 });
    const sent = (await drainQueue(testSqsClient(), queueUrls.interactive)).map((m) => parseJobMessage(m.Body ?? '').jobId);
    expect(sent.sort()).toEqual(good.map((j) => j.id).sort());
  });

  it('fails closed on an unknown event type: row failed with UNKNOWN_EVENT_TYPE, an error logged, nothing sent', async () => {
    const { queueUrls } = await createTestQueues();
    const job = await insertJob();
    const secret = 'sk-this-must-never-be-logged';
    await getPrisma().outboxEvent.createMany({
      data: [enqueueRowFor(job, { eventType: 'ai.job.teleported', dedupeKey: `ai.job.teleported:${job.id}`, payload: { secret } })],
    });
    const sqs = testSqsClient();
    const sends = countSends(sqs);
    const deps = testDispatcherDeps({ queueUrls, sqs });

    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, failed: 1, published: 0 });

    const [row] = await outboxRows();
    expect(row).toMatchObject({ status: 'failed', attemptCount: 0 });
    expect(row?.lastError).toMatch(/^UNKNOWN_EVENT_TYPE: /);
    expect(sends.calls).toBe(0);
    expect(await drainQueue(testSqsClient(), queueUrls.interactive)).toHaveLength(0);
    const errors = deps.logger.records.filter((r) => r.level === 'error');
    expect(errors.some((r) => JSON.stringify(r.attributes).includes('ai.job.teleported'))).toBe(true);
    expect(JSON.stringify(deps.logger.records)).not.toContain(secret);
    // Not an enqueue row: the job is left alone.
    expect(await getPrisma().aiJob.findUniqueOrThrow({ where: { id: job.id } })).toMatchObject({ lifecycleStatus: 'queued' });
  });

  it('fails closed on an enqueue row whose job does not exist, without sending', async () => {
    const { queueUrls } = await createTestQueues();
    const ghost = { id: '01J00000000000000000000000', queueName: 'interactive' };
    await getPrisma().outboxEvent.createMany({ data: [enqueueRowFor(ghost)] });
    const deps = testDispatcherDeps({ queueUrls });

    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, failed: 1 });
    expect((await outboxRows())[0]?.lastError).toMatch(/^JOB_NOT_FOUND: /);
    expect(await drainQueue(testSqsClient(), queueUrls.interactive)).toHaveLength(0);
  });
});
