/**
 * Every statement that names outbox rows by an id list reaches them through the primary key, even on a small
 * table whose statistics favour a scan (lib/outbox/outbox-claims.ts, `OUTBOX_BY_ID`). A locking scan locks
 * rows that are not in the list, and a concurrent `SKIP LOCKED` claim skips them: the scheduled run then
 * mistook its short batch for the end of the backlog (seen in CI).
 *
 * A scheduled run with published, retried, handed-off and released rows, and the eager lease's settles, run
 * as a database user of their own on a freshly filled table of 200 rows; every such statement is read back
 * from the server's general log (values inlined: text protocol) and EXPLAINed.
 */
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient, getPrisma, type PrismaDb } from '../../lib/db/client.ts';
import { createSqlPool, type SqlPool } from '../../lib/db/sql-pool.ts';
import { runScheduledDispatch } from '../../lib/outbox/dispatcher.ts';
import { markOutboxPublished, publishedUnder, scheduleOutboxRetry } from '../../lib/outbox/outbox-settlement.ts';
import { rawDb, withStaleStatistics } from '../helpers/db.ts';
import { loggedUser, splitStatements } from '../helpers/general-log.ts';
import { createTestQueues, enqueueRowFor, insertQueuedJobsWithEvents, queuedJobRow, testDispatcherDeps } from '../helpers/outbox-factories.ts';

let logged: Awaited<ReturnType<typeof loggedUser>>;
let sql: SqlPool;
let db: PrismaDb;

beforeAll(async () => {
  await rawDb();
  logged = await loggedUser(process.env.DATABASE_URL ?? '', `outbox-plans:${process.pid}:${Date.now()}`);
  sql = createSqlPool(logged.url);
  db = createPrismaClient(logged.url);
});

afterAll(async () => {
  await sql?.end();
  await db?.$disconnect();
  await logged?.release();
});

/** A statement's shape: its text up to the id list, with values left out. */
function shapeOf(statement: string): string {
  return statement.slice(0, statement.indexOf('WHERE id IN')).replace(/'[^']*'/g, '?').replace(/\s+/g, ' ').trim();
}

describe('outbox statements by id list', () => {
  it('read their rows through the primary key on a small, freshly filled table', { timeout: 60_000 }, async () => {
    const { queueUrls } = await createTestQueues();
    // Without the hint, 40 ids of these 200 rows are read by a scan of the primary key.
    await withStaleStatistics(['OutboxEvent'], async () => {
      // Background sends fail (no such queue): rows with attempts left are retried, the rest handed off to give up.
      await insertQueuedJobsWithEvents(150);
      await (await rawDb()).query(
        "UPDATE OutboxEvent SET attemptCount = 2 WHERE queueName = 'background' ORDER BY id LIMIT 50",
      );
      // Rows whose eager holder vanished: released by the run's first cycle.
      const abandoned = Array.from({ length: 50 }, () => queuedJobRow());
      const past = new Date(Date.now() - 120_000);
      await getPrisma().aiJob.createMany({ data: abandoned });
      await getPrisma().outboxEvent.createMany({
        data: abandoned.map((j) => enqueueRowFor(j, { status: 'processing', lockedBy: 'gone', lockedAt: past, availableAt: past })),
      });
      const deps = testDispatcherDeps({
        queueUrls: { ...queueUrls, background: `${queueUrls.background}-missing` }, sql, db,
        policy: { batchSize: 40, batchesInFlight: 3 },
      });

      const summary = await runScheduledDispatch(deps, { remainingTimeMs: () => 60_000 });
      expect(summary.released).toBe(50);
      expect(summary.published).toBeGreaterThan(0);
      expect(summary.retried).toBeGreaterThan(0);
      expect(summary.dead).toBeGreaterThan(0);

      // The eager lease's settles, with lists of 40: rows taken under a lease, then published or sent back.
      const [leased] = await (await rawDb()).query<mysql.RowDataPacket[]>(
        "SELECT id FROM OutboxEvent WHERE status = 'published' ORDER BY id LIMIT 80",
      );
      const ids = leased.map((r) => String(r.id));
      await (await rawDb()).query(
        `UPDATE OutboxEvent SET status = 'processing', lockedBy = 'eager-1' WHERE id IN (${ids.map(() => '?').join(', ')})`, ids,
      );
      const now = new Date();
      expect(await markOutboxPublished(sql, ids.slice(0, 40), 'eager-1', now)).toBe(40);
      expect(await publishedUnder(sql, ids.slice(0, 40), 'eager-1')).toHaveLength(40);
      expect(await scheduleOutboxRetry(sql, ids.slice(40), 'eager-1', { availableAt: now, error: 'boom', now })).toBe(40);

      const byIdList = (await logged.rows())
        .filter((r) => r.command === 'Query')
        .flatMap((r) => splitStatements(r.argument))
        .filter((s) => /\bOutboxEvent\b/.test(s) && /WHERE id IN \(/.test(s));
      const shapes = new Map<string, { statement: string; plan: mysql.RowDataPacket }>();
      for (const statement of byIdList) {
        const [[plan]] = await (await rawDb()).query<mysql.RowDataPacket[]>(`EXPLAIN ${statement}`);
        const shape = shapeOf(statement);
        const why = `${JSON.stringify(plan)}\n${statement.slice(0, 400)}`;
        expect(plan?.key, why).toBe('PRIMARY');
        expect(plan?.type, why).toBe('range');
        shapes.set(shape, { statement, plan: plan! });
      }
      process.stdout.write(`${[...shapes].map(([shape, { plan }]) => `${shape.slice(0, 80).padEnd(80)} type=${plan.type} key=${plan.key} rows=${plan.rows}`).join('\n')}\n`);
      // Published, retried and handed off by the held batches; released; the lease's publish, check and retry.
      expect(shapes.size).toBe(7);
    });
  });
});
