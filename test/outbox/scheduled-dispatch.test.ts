/**
 * The scheduled dispatcher Lambda: loops cycles while due rows remain and time is left, and the handler in
 * functions/dispatcher.ts wires it from the environment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { handler } from '../../functions/dispatcher.ts';
import { databaseUrlFromEnv } from '../../lib/db/database-url.ts';
import { createSqlPool } from '../../lib/db/sql-pool.ts';
import { runScheduledDispatch } from '../../lib/outbox/dispatcher.ts';
import { countRows, rawDb } from '../helpers/db.ts';
import { silentEndpoint } from '../helpers/ports.ts';
import { createTestQueues, drainQueue, insertQueuedJobsWithEvents, testDispatcherDeps, testSqsClient } from '../helpers/outbox-factories.ts';

function lambdaContext(remainingMs: number): Context {
  return { awsRequestId: 'req-1', getRemainingTimeInMillis: () => remainingMs } as unknown as Context;
}

describe('scheduled dispatch', () => {
  it('runs cycles until no due rows remain', async () => {
    const { queueUrls } = await createTestQueues();
    await insertQueuedJobsWithEvents(250);
    const deps = testDispatcherDeps({ queueUrls, policy: { batchSize: 100, batchesInFlight: 1 } });

    const summary = await runScheduledDispatch(deps, { remainingTimeMs: () => 60_000 });

    expect(summary).toMatchObject({ cycles: 3, claimed: 250, published: 250, retried: 0, dead: 0, failed: 0 });
    expect(deps.metrics.total('OutboxPublished')).toBe(250);
    expect(deps.metrics.total('OutboxBacklog')).toBe(0);
    expect(deps.metrics.published).toBe(4); // one metrics flush per cycle, one for the backlog at the end
  });

  it('overlaps batches in flight without sending any row twice', async () => {
    const { queueUrls } = await createTestQueues();
    await insertQueuedJobsWithEvents(250);
    const deps = testDispatcherDeps({ queueUrls, policy: { batchSize: 40, batchesInFlight: 3 } });

    const summary = await runScheduledDispatch(deps, { remainingTimeMs: () => 60_000 });

    expect(summary).toMatchObject({ claimed: 250, published: 250, retried: 0, dead: 0, failed: 0 });
    expect(summary.cycles).toBeGreaterThanOrEqual(7);
  });

  it('needs one raw connection per batch in flight: a batch looks up its jobs in its own transaction', async () => {
    const { queueUrls } = await createTestQueues();
    await insertQueuedJobsWithEvents(250);
    const url = new URL(databaseUrlFromEnv());
    url.searchParams.set('connectionLimit', '1');
    url.searchParams.set('poolTimeoutMs', '3000'); // a starved claim fails fast instead of hanging
    const sql = createSqlPool(url.toString());
    try {
      const deps = testDispatcherDeps({ queueUrls, sql, policy: { batchSize: 40, batchesInFlight: 1 } });

      const summary = await runScheduledDispatch(deps, { remainingTimeMs: () => 60_000 });

      expect(summary).toMatchObject({ claimed: 250, published: 250, retried: 0 });
    } finally {
      await sql.end();
    }
  });

  it('when settling one batch fails, lets the batches in flight finish before it throws', async () => {
    const { queueUrls } = await createTestQueues();
    const { events } = await insertQueuedJobsWithEvents(250);
    // The first row in claim order, so the first batch fails; slowly (0.3 s), so the batches claimed after it
    // are in flight when it does.
    const claimOrder = (e: (typeof events)[number]) => `${new Date(e.availableAt ?? 0).toISOString()} ${e.id}`;
    const poisoned = [...events].sort((a, b) => claimOrder(a).localeCompare(claimOrder(b)))[0]!;
    const db = await rawDb();
    await db.query(
      `CREATE TRIGGER fail_one_publish BEFORE UPDATE ON OutboxEvent FOR EACH ROW BEGIN
       IF NEW.status = 'published' AND OLD.id = '${poisoned.id}' THEN
         DO SLEEP(0.3); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure';
       END IF; END`,
    );
    try {
      const deps = testDispatcherDeps({ queueUrls, policy: { batchSize: 40, batchesInFlight: 3 } });

      await expect(runScheduledDispatch(deps, { remainingTimeMs: () => 60_000 })).rejects.toThrow(/injected failure/);

      // The failed batch was rolled back: its rows, the poisoned one among them, are `pending` again and
      // untouched (their messages went out and will be deduplicated when re-sent). Every other batch the run
      // had claimed was settled before it threw: no row is locked any more, and nothing changes afterwards.
      const published = await countRows('OutboxEvent', "status = 'published'");
      expect(published).toBeGreaterThanOrEqual(40);
      expect(await countRows('OutboxEvent', "status = 'pending' AND attemptCount = 0")).toBe(250 - published);
      expect(await countRows('OutboxEvent', "status = 'pending' AND id = ?", [poisoned.id])).toBe(1);
      const [unlocked] = await db.query(
        "START TRANSACTION; SELECT COUNT(*) AS n FROM (SELECT id FROM OutboxEvent WHERE status = 'pending' FOR UPDATE SKIP LOCKED) t; ROLLBACK",
      ) as unknown as [unknown[]];
      expect(Number((unlocked[1] as { n: number }[])[0]?.n)).toBe(250 - published);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await countRows('OutboxEvent', "status = 'published'")).toBe(published);
      const sent = (await drainQueue(testSqsClient(), queueUrls.interactive)).length + (await drainQueue(testSqsClient(), queueUrls.background)).length;
      expect(sent).toBe(published + 40);
    } finally {
      await db.query('DROP TRIGGER IF EXISTS fail_one_publish');
    }
  });

  it('starts no cycle when the time left is within the safety margin', async () => {
    const { queueUrls } = await createTestQueues();
    await insertQueuedJobsWithEvents(5);
    const deps = testDispatcherDeps({ queueUrls });

    const summary = await runScheduledDispatch(deps, { remainingTimeMs: () => 9_000, safetyMarginMs: 10_000 });

    expect(summary).toMatchObject({ cycles: 0, claimed: 0 });
    expect(await countRows('OutboxEvent', "status = 'pending'")).toBe(5);
  });

  it('stops between cycles once the remaining time runs short', async () => {
    const { queueUrls } = await createTestQueues();
    await insertQueuedJobsWithEvents(30);
    const deps = testDispatcherDeps({ queueUrls, policy: { batchSize: 10, sendTimeoutMs: 500 } });
    let remaining = 12_000;

    const summary = await runScheduledDispatch(deps, { remainingTimeMs: () => (remaining -= 1_000), safetyMarginMs: 10_000 });

    expect(summary.cycles).toBe(1);
    expect(await countRows('OutboxEvent', "status = 'pending'")).toBe(20);
  });

  it("cuts a cycle's send budget to the time left before the safety margin, so a stalled queue cannot run it into the timeout", async () => {
    const silent = await silentEndpoint();
    try {
      const stalled = new SQSClient({ region: 'us-east-1', endpoint: silent.url, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
      const { queueUrls } = await createTestQueues();
      const { jobs: [job] } = await insertQueuedJobsWithEvents(1);
      const deps = testDispatcherDeps({ queueUrls, sqs: stalled, policy: { sendTimeoutMs: 15_000 } });

      // 12 s left, 10 s kept back: the cycle's sends get 2 s of their 15 s.
      const summary = await runScheduledDispatch(deps, { remainingTimeMs: () => 12_000, safetyMarginMs: 10_000 });

      expect(summary).toMatchObject({ cycles: 1, claimed: 1, published: 0 });
      const row = await getPrisma().outboxEvent.findFirstOrThrow({ where: { aggregateId: job!.id } });
      expect(row).toMatchObject({ status: 'pending', attemptCount: 1 });
      const cycles = deps.logger.records.filter((r) => r.message === 'dispatch cycle');
      expect(cycles.map((r) => r.attributes[0]?.sendBudgetMs)).toEqual([2_000]);
    } finally {
      await silent.close();
    }
  }, 60_000);

  describe('Lambda handler', () => {
    let queueUrls: Record<'interactive' | 'background', string>;
    const saved = { ...process.env };
    beforeAll(async () => {
      ({ queueUrls } = await createTestQueues());
      process.env.INTERACTIVE_QUEUE_URL = queueUrls.interactive;
      process.env.BACKGROUND_QUEUE_URL = queueUrls.background;
      process.env.EVENT_BUS_NAME = 'default';
      process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
      process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    });
    afterAll(() => {
      for (const key of ['INTERACTIVE_QUEUE_URL', 'BACKGROUND_QUEUE_URL', 'EVENT_BUS_NAME', 'POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_METRICS_DISABLED']) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    });

    it('dispatches due rows with configuration from the environment and returns the counts', async () => {
      const { jobs } = await insertQueuedJobsWithEvents(12);

      const summary = await handler({} as ScheduledEvent, lambdaContext(55_000));

      expect(summary).toMatchObject({ claimed: 12, published: 12 });
      expect(summary.cycles).toBeGreaterThanOrEqual(1);
      const sqs = testSqsClient();
      const received = [...await drainQueue(sqs, queueUrls.interactive), ...await drainQueue(sqs, queueUrls.background)];
      expect(received).toHaveLength(jobs.length);
    });
  });
});
