/**
 * Query plans of AiJob on a seeded table (issue 12: "keep the indexes a query plan uses, show EXPLAIN for each
 * API query"):
 * - every list shape of `GET /api/ai/jobs` and `GET /admin-api/ai/jobs` runs through lib/api/job-reads.ts as a
 *   database user of its own; the SQL Prisma sent is read back from the server's general log and EXPLAINed:
 *   each reads an index in order (no filesort, no full scan) and, run again, stops after the page — the
 *   handler reads it takes stay within a small multiple of the page size, whatever the table holds;
 * - the other queries on AiJob (creation limits, reaper, stats, retention), as lib/ sends them, use an index;
 * - every secondary index of AiJob is the chosen key of at least one of these plans (an index no plan uses
 *   costs every write for nothing).
 * The plans are printed; docs/data-at-scale.md lists them.
 * And the scheduled outbox claim (lib/outbox/held-claim.ts), a locking read: it takes the due range of the
 * (status, availableAt) index in order, never a scan and a sort, which would lock every due row it read.
 */
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient, type PrismaDb } from '../../lib/db/client.ts';
import { listAllJobs, listUserJobs } from '../../lib/api/job-reads.ts';
import { limitsGuard } from '../../lib/api/creation-limits.ts';
import { jobRegistry } from '../../lib/jobs/registry.ts';
import { adminJobListQuerySchema, userJobListQuerySchema } from '../../lib/api/request-schemas.ts';
import { CLAIM_DUE_ROWS } from '../../lib/outbox/held-claim.ts';
import { rawDb } from '../helpers/db.ts';
import { loggedUser, logRowsOf, serverNow } from '../helpers/general-log.ts';

const T = "('succeeded', 'failed', 'cancelled')";
const SINCE = "'2026-11-30 00:00:00'";
const JOBS = 30_000;
/** Page size of every list call here (the API's default). */
const PAGE = 20;

/** List shapes of the two list routes: the filters each route accepts, alone and combined as the console does. */
const USER_LISTS: Record<string, Record<string, string>> = {
  "user's list": {},
  "user's list by status": { status: 'failed' },
  "user's list by type": { jobType: 'quiz_generation' },
  "user's list by status and type": { status: 'succeeded', jobType: 'quiz_generation' },
};
const ADMIN_LISTS: Record<string, Record<string, string>> = {
  'admin list': {},
  'admin list by status': { status: 'failed' },
  'admin list by the commonest status': { status: 'succeeded' },
  'admin list by open status': { status: 'running' },
  'admin list by type and status': { jobType: 'rare_type', status: 'failed' },
  'admin list by common type and status': { jobType: 'quiz_generation', status: 'succeeded' },
  'admin list by user': { userId: 'u7' },
  'admin list by user and status': { userId: 'u7', status: 'cancelled' },
  'admin list by user and creation time': { userId: 'u7', createdFrom: '2026-10-01T00:00:00Z', createdTo: '2026-11-20T00:00:00Z' },
  'admin list by creation time': { createdFrom: '2026-10-01T00:00:00Z', createdTo: '2026-11-20T00:00:00Z' },
  'admin list by status and creation time': { status: 'succeeded', createdTo: '2026-11-20T00:00:00Z' },
  'admin list by user, status and creation time': { userId: 'u7', status: 'succeeded', createdFrom: '2026-10-01T00:00:00Z', createdTo: '2026-11-20T00:00:00Z' },
  // Filters without an index of their own: read (createdAt) in order and filtered; a page costs
  // page ÷ (share of matching jobs) reads, whatever the table size.
  'admin list by type': { jobType: 'quiz_generation' },
  'admin list by queue': { queueName: 'interactive' },
  'admin list by error code': { errorCode: 'PROVIDER_UNAVAILABLE' },
};
/**
 * Shapes read in order but with a filter checked on the rows walked (the user's lists by type: the job type
 * follows the user and status in no index): their reads are bounded by the share of matches instead.
 */
const FILTERED_WALKS = new Set([
  "user's list by type", "user's list by status and type", 'admin list by type', 'admin list by queue', 'admin list by error code',
]);

/** The other queries on AiJob, in SQL as lib/ sends them (parameters inlined). */
const OTHER_QUERIES: Record<string, string> = {
  'creation limit: active jobs': "SELECT COUNT(*) FROM `AiJob` WHERE userId = 'u7' AND lifecycleStatus IN ('queued', 'running') AND jobType = 'quiz_generation'",
  'creation limit: daily quota': `SELECT COUNT(*) FROM \`AiJob\` WHERE userId = 'u7' AND createdAt >= ${SINCE} AND jobType = 'quiz_generation'`,
  'idempotency lookup': "SELECT id FROM `AiJob` WHERE userId = 'u7' AND jobType = 'feynman_evaluation' AND idempotencyKey = 'k7'",
  'reaper: expired leases': "SELECT id FROM `AiJob` WHERE lifecycleStatus = 'running' AND lockedBy IS NOT NULL AND lockUntil < NOW() ORDER BY lockUntil LIMIT 200",
  'reaper: overdue retries': "SELECT id FROM `AiJob` WHERE lifecycleStatus = 'running' AND lockedBy IS NULL AND (lockUntil < NOW() OR (lockUntil IS NULL AND updatedAt < NOW())) ORDER BY lockUntil LIMIT 200",
  'reaper: queued, not picked up': "SELECT id FROM `AiJob` WHERE queueName = 'interactive' AND lifecycleStatus = 'queued' AND createdAt < NOW() ORDER BY createdAt LIMIT 200",
  'boot recovery: open jobs': "SELECT id FROM `AiJob` WHERE lifecycleStatus IN ('queued', 'running') AND id > '0' ORDER BY id LIMIT 500",
  'stats: open jobs': "SELECT jobType, lifecycleStatus, COUNT(*) FROM `AiJob` WHERE lifecycleStatus IN ('queued', 'running') GROUP BY lifecycleStatus, jobType",
  'stats: finished since': `SELECT jobType, lifecycleStatus, COUNT(*) FROM \`AiJob\` WHERE lifecycleStatus IN ${T} AND finishedAt >= ${SINCE} GROUP BY jobType, lifecycleStatus`,
  'retention: opted-in jobs': `SELECT id FROM \`AiJob\` WHERE jobType = 'rare_type' AND lifecycleStatus IN ${T} AND createdAt < ${SINCE} AND finishedAt < ${SINCE} LIMIT 500`,
  'retention: has a retry': "SELECT 1 FROM `AiJob` WHERE parentJobId = '01PQAN00000000000000000004'",
};

const DIGITS = `(${Array.from({ length: 10 }, (_, d) => `SELECT ${d} AS d`).join(' UNION ALL ')})`;
let db: mysql.Connection;
let session: Awaited<ReturnType<typeof loggedUser>>;
let logged: PrismaDb;

beforeAll(async () => {
  db = await rawDb();
  session = await loggedUser(process.env.DATABASE_URL ?? '', `query-plans:${process.pid}:${Date.now()}`);
  logged = createPrismaClient(session.url);
});

afterAll(async () => {
  await logged?.$disconnect();
  await session?.release();
});

/** Seeded in the test: every test starts from empty tables. */
async function seed(): Promise<void> {
  // 30,000 jobs over ~70 days: 29 users (each with jobs of every type and state), three types and a rare one,
  // 90% succeeded, 7% failed, 3% cancelled; the newest 300 open (queued or running).
  await db.query(`
    INSERT INTO \`AiJob\` (id, userId, jobType, triggerType, targetType, targetId, inputHash, lifecycleStatus, queueName, priority,
      maxAttempts, timeoutMs, inputSchemaVersion, outputSchemaVersion, promptKey, promptVersion, modelTier, credentialMode,
      lockedBy, lockUntil, finishedAt, errorCode, createdAt, updatedAt, idempotencyKey, parentJobId)
    SELECT CONCAT('01PQAN', LPAD(i, 20, '0')), CONCAT('u', i % 29), IF(i % 100 = 3, 'rare_type', ELT(1 + i % 3, 'quiz_generation', 'feynman_evaluation', 'flashcard_generation')),
      'user', 't', 't', REPEAT('0', 64),
      CASE WHEN i > ${JOBS - 300} THEN IF(i % 2 = 0, 'queued', 'running') WHEN i % 100 < 7 THEN 'failed' WHEN i % 100 < 10 THEN 'cancelled' ELSE 'succeeded' END,
      IF(i % 3 = 0, 'interactive', 'background'), 50, 3, 1000, 'v1', 'v1', 'p', 'v1', 'fast', 'platform_key',
      IF(i > ${JOBS - 300} AND i % 2 = 1, 'w', NULL), IF(i > ${JOBS - 300} AND i % 2 = 1, NOW(3), NULL),
      IF(i > ${JOBS - 300}, NULL, TIMESTAMP'2026-12-01 00:00:00' - INTERVAL (${JOBS} - i) * 200 SECOND),
      IF(i % 100 < 7 AND i <= ${JOBS - 300}, 'PROVIDER_UNAVAILABLE', NULL),
      TIMESTAMP'2026-12-01 00:00:00' - INTERVAL (${JOBS} - i) * 200 SECOND - INTERVAL 5 SECOND, NOW(3),
      CONCAT('k', i), IF(i % 97 = 5, CONCAT('01PQAN', LPAD(i - 1, 20, '0')), NULL)
    FROM (SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS i FROM ${DIGITS} a, ${DIGITS} b, ${DIGITS} c, ${DIGITS} e, ${DIGITS} f) n
    WHERE i <= ${JOBS}`);
  await db.query('ANALYZE TABLE `AiJob`');
}

interface PlanRow { table: string; type: string; possible_keys: string | null; key: string | null; rows: number; Extra: string | null }

async function explain(sql: string): Promise<PlanRow> {
  const [rows] = await db.query<mysql.RowDataPacket[]>(`EXPLAIN ${sql}`);
  return (rows as unknown as PlanRow[])[0]!;
}

/** Rows the storage engine handed the server for `sql` (the session's Handler_read_* counters around it). */
async function handlerReads(sql: string): Promise<number> {
  const total = async () => {
    const [rows] = await db.query<mysql.RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Handler_read%'");
    return rows.reduce((n, r) => n + Number(r.Value), 0);
  };
  const before = await total();
  await db.query(sql);
  // SHOW STATUS itself reads no table rows through the handler counters of this connection.
  return (await total()) - before;
}

/** Runs every list shape as the logged user, page 1 and then page 2 (from page 1's cursor); returns the SQL sent per call. */
async function listQueries(): Promise<{ name: string; sql: string }[]> {
  const since = await serverNow(session.admin);
  const names: string[] = [];
  for (const [name, filters] of Object.entries(USER_LISTS)) {
    const first = await listUserJobs(logged, 'u7', userJobListQuerySchema.parse(filters));
    expect(first.items, name).toHaveLength(PAGE);
    await listUserJobs(logged, 'u7', userJobListQuerySchema.parse({ ...filters, cursor: first.nextCursor }));
    names.push(name, `${name}, next page`);
  }
  for (const [name, filters] of Object.entries(ADMIN_LISTS)) {
    const first = await listAllJobs(logged, adminJobListQuerySchema.parse(filters));
    expect(first.items, name).toHaveLength(PAGE);
    await listAllJobs(logged, adminJobListQuerySchema.parse({ ...filters, cursor: first.nextCursor }));
    names.push(name, `${name}, next page`);
  }
  const sent = (await logRowsOf(session.admin, session.user, since))
    .filter((r) => r.command === 'Query' && /^SELECT id FROM `AiJob` FORCE INDEX /.test(r.argument))
    .map((r) => r.argument);
  expect(sent).toHaveLength(names.length);
  return names.map((name, i) => ({ name, sql: sent[i]! }));
}

const line = (name: string, plan: PlanRow, extra = '') =>
  `${name.padEnd(44)} type=${String(plan.type).padEnd(6)} key=${String(plan.key).padEnd(44)} ${plan.Extra ?? ''}${extra}`;

describe('AiJob query plans', () => {
  it('each list shape reads an index in order and stops at the page; other queries use an index; every index is used', { timeout: 120_000 }, async () => {
    await seed();
    const chosen = new Set<string>();

    const lists = [];
    for (const { name, sql } of await listQueries()) lists.push({ name, sql, plan: await explain(sql), reads: await handlerReads(sql) });
    const others = [];
    for (const [name, sql] of Object.entries(OTHER_QUERIES)) others.push({ name, sql, plan: await explain(sql) });
    process.stdout.write(`${[...lists.map((q) => line(q.name, q.plan, `  (reads ${q.reads})`)), ...others.map((q) => line(q.name, q.plan))].join('\n')}\n`);

    for (const { name, sql, plan, reads } of lists) {
      const shape = name.replace(/, next page$/, '');
      const why = `${name}: ${JSON.stringify(plan)} ${sql}`;
      expect(plan.key, why).not.toBeNull();
      expect(plan.type, why).not.toBe('ALL');
      expect(plan.Extra ?? '', why).not.toMatch(/filesort|temporary/);
      // page + 1 rows (the extra one says more exist), an index entry and a row each, and the range starts.
      const bound = FILTERED_WALKS.has(shape) ? 50 * (PAGE + 1) : 3 * (PAGE + 1) + 4;
      expect(reads, `${name}: ${reads} handler reads for a page of ${PAGE}: ${sql}`).toBeLessThanOrEqual(bound);
      chosen.add(String(plan.key));
    }
    for (const { name, plan } of others) {
      expect(plan.key, `${name}: ${JSON.stringify(plan)}`).not.toBeNull();
      expect(plan.type, `${name}: ${JSON.stringify(plan)}`).not.toBe('ALL');
      chosen.add(String(plan.key));
    }
    // The same two counts as the creating transaction's first statement sends them (lib/api/creation-limits.ts).
    const guard = limitsGuard('u7', jobRegistry.get('quiz_generation'), new Date(`${SINCE.slice(1, 11)}T12:00:00Z`));
    const [guardPlan] = await db.query<mysql.RowDataPacket[]>(`EXPLAIN ${guard.sql}`, guard.values);
    const counts = (guardPlan as unknown as PlanRow[]).filter((r) => r.table === 'AiJob');
    expect(counts, JSON.stringify(guardPlan)).toHaveLength(2);
    for (const plan of counts) {
      expect(plan.key, `creation limits guard: ${JSON.stringify(plan)}`).not.toBeNull();
      expect(plan.type, `creation limits guard: ${JSON.stringify(plan)}`).not.toBe('ALL');
    }

    const [indexes] = await db.query<mysql.RowDataPacket[]>(
      "SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'AiJob' AND INDEX_NAME <> 'PRIMARY'",
    );
    const unused = indexes.map((r) => String(r.name)).filter((name) => !chosen.has(name));
    expect(unused).toEqual([]);
    // 7 plain indexes + the idempotency key (docs/data-at-scale.md says why each exists).
    expect(indexes).toHaveLength(8);
  });
});

describe('OutboxEvent: the scheduled claim', () => {
  it('reads the due range of (status, availableAt) in order and stops at the batch, with a backlog behind it', { timeout: 60_000 }, async () => {
    // 20,000 rows: 15,000 published, a backlog of 4,000 due, 1,000 due later (a retry's backoff).
    await db.query(`
      INSERT INTO OutboxEvent (id, eventType, aggregateType, aggregateId, dedupeKey, payload, queueName, messageGroupId, status,
        attemptCount, availableAt, publishedAt, createdAt, updatedAt)
      SELECT CONCAT('01OB', LPAD(i, 22, '0')), 'ai.job.enqueue', 'AiJob', CONCAT('01AG', LPAD(i, 22, '0')), CONCAT('k', i), '{}',
        'interactive', 'g', IF(i <= 15000, 'published', 'pending'), 0,
        IF(i > 19000, TIMESTAMP'2026-12-01 12:00:00' + INTERVAL i SECOND, TIMESTAMP'2026-12-01 12:00:00' - INTERVAL (20000 - i) SECOND),
        IF(i <= 15000, TIMESTAMP'2026-12-01 00:00:00', NULL), NOW(3), NOW(3)
      FROM (SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS i FROM ${DIGITS} a, ${DIGITS} b, ${DIGITS} c, ${DIGITS} e, ${DIGITS} f) n
      WHERE i <= 20000`);
    await db.query('ANALYZE TABLE `OutboxEvent`');
    const [rows] = await db.query<mysql.RowDataPacket[]>(`EXPLAIN ${CLAIM_DUE_ROWS}`, [new Date('2026-12-01T12:00:00Z'), 500]);
    const plan = (rows as unknown as PlanRow[])[0]!;
    const claim = db.format(CLAIM_DUE_ROWS, [new Date('2026-12-01T12:00:00Z'), 500]);
    const reads = await handlerReads(claim);
    process.stdout.write(`${line('outbox: scheduled claim (500 of 4,000 due)', plan, `  (reads ${reads})`)}\n`);
    // `range` over (status, availableAt): the due bound is part of the access, not a filter on every pending row.
    expect(plan).toMatchObject({ key: 'OutboxEvent_status_availableAt_idx', type: 'range' });
    expect(plan.Extra ?? '').not.toMatch(/filesort|temporary/);
    expect(reads, claim).toBeLessThanOrEqual(3 * (500 + 1) + 4);
  });
});
