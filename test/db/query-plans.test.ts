/**
 * Every query the API, the reaper, the stats and retention run on AiJob, EXPLAINed on a seeded table: none is
 * a full scan, and each secondary index of AiJob is a possible key of at least one of them (an index no query
 * can use costs every write for nothing). The plans are printed; docs/data-at-scale.md lists them.
 */
import type mysql from 'mysql2/promise';
import { beforeAll, describe, expect, it } from 'vitest';
import { rawDb } from '../helpers/db.ts';

const SELECT = 'SELECT id FROM `AiJob`';
const T = "('succeeded', 'failed', 'cancelled')";
const SINCE = "'2026-11-30 00:00:00'";

/** What runs, in SQL as Prisma and lib/ send it (parameters inlined). */
const QUERIES: Record<string, string> = {
  'user list': `${SELECT} WHERE userId = 'u7' ORDER BY id DESC LIMIT 21`,
  'user list by status and type': `${SELECT} WHERE userId = 'u7' AND lifecycleStatus = 'failed' AND jobType = 'quiz_generation' ORDER BY id DESC LIMIT 21`,
  'admin list by status': `${SELECT} WHERE lifecycleStatus = 'running' ORDER BY id DESC LIMIT 21`,
  'admin list by type and status': `${SELECT} WHERE jobType = 'rare_type' AND lifecycleStatus = 'failed' ORDER BY id DESC LIMIT 21`,
  'admin list by user and creation time': `${SELECT} WHERE userId = 'u7' AND createdAt >= ${SINCE} ORDER BY id DESC LIMIT 21`,
  'creation limit: active jobs': "SELECT COUNT(*) FROM `AiJob` WHERE userId = 'u7' AND lifecycleStatus IN ('queued', 'running') AND jobType = 'quiz_generation'",
  'creation limit: daily quota': `SELECT COUNT(*) FROM \`AiJob\` WHERE userId = 'u7' AND createdAt >= ${SINCE} AND jobType = 'quiz_generation'`,
  'idempotency lookup': `${SELECT} WHERE userId = 'u7' AND jobType = 'feynman_evaluation' AND idempotencyKey = 'k7'`,
  'reaper: expired leases': "SELECT id FROM `AiJob` WHERE lifecycleStatus = 'running' AND lockedBy IS NOT NULL AND lockUntil < NOW() ORDER BY lockUntil LIMIT 100",
  'reaper: stalled released jobs': "SELECT id FROM `AiJob` WHERE lifecycleStatus = 'running' AND lockedBy IS NULL AND updatedAt < NOW() ORDER BY updatedAt LIMIT 100",
  'stats: open jobs': "SELECT jobType, lifecycleStatus, COUNT(*) FROM `AiJob` WHERE lifecycleStatus IN ('queued', 'running') GROUP BY lifecycleStatus, jobType",
  'stats: finished since': `SELECT jobType, lifecycleStatus, COUNT(*) FROM \`AiJob\` WHERE lifecycleStatus IN ${T} AND finishedAt >= ${SINCE} GROUP BY jobType, lifecycleStatus`,
  'retention: opted-in jobs': `${SELECT} WHERE jobType = 'rare_type' AND lifecycleStatus IN ${T} AND finishedAt < ${SINCE} LIMIT 500`,
  'retention: has a retry': "SELECT 1 FROM `AiJob` WHERE parentJobId = '01PLAN00000000000000000004'",
};

const DIGITS = `(${Array.from({ length: 10 }, (_, d) => `SELECT ${d} AS d`).join(' UNION ALL ')})`;

let db: mysql.Connection;
beforeAll(async () => {
  db = await rawDb();
});

/** Seeded in the test: every test starts from empty tables. */
async function seed(): Promise<void> {
  // 6,000 jobs: 30 users, common and rare types, mostly finished over 60 days, a few open.
  await db.query(`
    INSERT INTO \`AiJob\` (id, userId, jobType, triggerType, targetType, targetId, inputHash, lifecycleStatus, queueName, priority,
      maxAttempts, timeoutMs, inputSchemaVersion, outputSchemaVersion, promptKey, promptVersion, modelTier, credentialMode,
      lockedBy, lockUntil, finishedAt, createdAt, updatedAt, idempotencyKey, parentJobId)
    SELECT CONCAT('01PLAN', LPAD(i, 20, '0')), CONCAT('u', i % 30), IF(i % 100 = 0, 'rare_type', ELT(1 + i % 3, 'quiz_generation', 'feynman_evaluation', 'flashcard_generation')),
      'user', 't', 't', REPEAT('0', 64), CASE WHEN i % 50 = 0 THEN 'queued' WHEN i % 50 = 1 THEN 'running' WHEN i % 7 = 3 THEN 'failed' ELSE 'succeeded' END,
      'interactive', 50, 3, 1000, 'v1', 'v1', 'p', 'v1', 'fast', 'platform_key',
      IF(i % 50 = 1, 'w', NULL), IF(i % 50 = 1, NOW(), NULL),
      IF(i % 50 IN (0, 1), NULL, NOW() - INTERVAL (6000 - i) * 14 MINUTE), NOW() - INTERVAL (6000 - i) * 14 MINUTE, NOW(),
      CONCAT('k', i), IF(i % 97 = 5, CONCAT('01PLAN', LPAD(i - 1, 20, '0')), NULL)
    FROM (SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d AS i FROM ${DIGITS} a, ${DIGITS} b, ${DIGITS} c, ${DIGITS} e) n
    WHERE i <= 6000`);
  await db.query('ANALYZE TABLE `AiJob`');
}

interface PlanRow { table: string; type: string; possible_keys: string | null; key: string | null; rows: number; Extra: string | null }

async function explain(sql: string): Promise<PlanRow[]> {
  const [rows] = await db.query<mysql.RowDataPacket[]>(`EXPLAIN ${sql}`);
  return rows as unknown as PlanRow[];
}

describe('AiJob query plans', () => {
  it('no query scans the whole table, and every secondary index serves at least one query', { timeout: 60_000 }, async () => {
    await seed();
    const possible = new Set<string>();
    const lines: string[] = [];
    for (const [name, sql] of Object.entries(QUERIES)) {
      const plan = (await explain(sql))[0]!;
      lines.push(`${name.padEnd(38)} type=${String(plan.type).padEnd(6)} key=${String(plan.key).padEnd(44)} rows=${plan.rows} ${plan.Extra ?? ''}`);
      expect(plan.type, `${name}: ${JSON.stringify(plan)}`).not.toBe('ALL');
      for (const k of (plan.possible_keys ?? '').split(',')) possible.add(k);
      if (plan.key) possible.add(plan.key);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    const [indexes] = await db.query<mysql.RowDataPacket[]>(
      "SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'AiJob' AND INDEX_NAME <> 'PRIMARY'",
    );
    const unused = indexes.map((r) => String(r.name)).filter((name) => !possible.has(name));
    expect(unused).toEqual([]);
    // Was 8 plain indexes + the idempotency key; now 6 + 1.
    expect(indexes).toHaveLength(7);
  });
});
