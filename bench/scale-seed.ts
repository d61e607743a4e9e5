/**
 * Seeds a bench database with N finished jobs as steady traffic leaves them. The last {@link RECENT_DAYS} days
 * hold the same {@link RECENT_JOBS} jobs at every size (the windows the stats and usage reports read: a week,
 * a day, an hour), and the other N − RECENT_JOBS jobs spread over the {@link HISTORY_DAYS} days before: history
 * grows with N, recent traffic does not. Per job: its AiJob row (90% succeeded, 7% failed, 3% cancelled;
 * {@link USERS} users, each with dozens of jobs at the smallest size; three job types), snapshot (expiring 30
 * days after creation), three transitions, two published outbox rows (enqueue and terminal event), one usage
 * ledger row and one artifact. Bulk INSERT … SELECT over a digits cross join, {@link CHUNK} jobs per
 * statement, with foreign-key and unique checks off for the seeding session (every row is new and refers to
 * rows seeded before it). Ids are `0x` + a zero-padded counter: older than any real ULID.
 */
import type mysql from 'mysql2/promise';
import type { PrismaDb } from '../lib/db/client.ts';
import { jobRegistry } from '../lib/jobs/registry.ts';
import { runMaintenance } from '../lib/maintenance/maintenance-run.ts';
import { DEFAULT_RETENTION } from '../lib/maintenance/retention-config.ts';

/** Jobs in the last RECENT_DAYS days, at every size (BENCH_RECENT_JOBS). */
export const RECENT_JOBS = Number(process.env.BENCH_RECENT_JOBS ?? 8_000);
export const RECENT_DAYS = 8;
/** Days of history before the recent window: 10^6 jobs are ~3 months of traffic. */
export const HISTORY_DAYS = 82;
/** A prime, so users, states (i % 100) and types (i % 3) mix. */
export const USERS = 197;
const CHUNK = 50_000;
const DIGITS = `(${Array.from({ length: 10 }, (_, d) => `SELECT ${d} AS d`).join(' UNION ALL ')})`;

function numbers(from: number, count: number): string {
  const digits = ['a', 'b', 'c', 'e', 'f'];
  const sum = digits.map((t, k) => `${10 ** k} * ${t}.d`).join(' + ');
  return `(SELECT ${from} + ${sum} AS i FROM ${digits.map((t) => `${DIGITS} ${t}`).join(', ')}) n WHERE i < ${from + count}`;
}

const id = (prefix: string) => `CONCAT('${prefix}', LPAD(i, 24, '0'))`;
/** `prefix` + counter + suffix column, 26 characters. */
const idWith = (prefix: string, suffix: string) => `CONCAT('${prefix}', LPAD(i, 23, '0'), ${suffix})`;

function statements(n: number, from: number, count: number): string[] {
  const src = numbers(from, count);
  // Job i (newer as i grows) finished `at`: the newest RECENT_JOBS evenly over the last RECENT_DAYS days, the
  // older ones evenly over the HISTORY_DAYS before.
  const recent = Math.min(n, RECENT_JOBS);
  const older = n - recent;
  const secondsAgo = `IF(i >= ${older}, (${n} - i) * ${(RECENT_DAYS * 86_400) / recent}, ${RECENT_DAYS * 86_400} + (${older} - i) * ${older > 0 ? (HISTORY_DAYS * 86_400) / older : 0})`;
  const at = `(NOW(3) - INTERVAL ROUND(${secondsAgo}, 3) SECOND)`;
  const status = "CASE WHEN i % 100 < 7 THEN 'failed' WHEN i % 100 < 10 THEN 'cancelled' ELSE 'succeeded' END";
  const type = "ELT(1 + i % 3, 'feynman_evaluation', 'quiz_generation', 'flashcard_generation')";
  return [
    `INSERT INTO AiJob (id, userId, jobType, triggerType, targetType, targetId, inputHash, lifecycleStatus, queueName, priority, attemptCount,
       maxAttempts, timeoutMs, inputSchemaVersion, outputSchemaVersion, promptKey, promptVersion, modelTier, modelProvider, modelName,
       credentialMode, leaseVersion, progress, startedAt, finishedAt, errorCode, publicErrorMessage, outputHash, createdAt, updatedAt)
     SELECT ${id('00')}, CONCAT('u', i % ${USERS}), ${type}, 'user', 'concept', CONCAT('t', i), SHA2(i, 256), ${status},
       IF(i % 3 = 0, 'interactive', 'background'), 50, 1, 3, 60000, 'v1', 'v1', 'p', 'v1', 'fast', 'mock', 'mock-model', 'platform_key', 1,
       100, ${at} - INTERVAL 3 SECOND, ${at}, IF(i % 100 < 7, 'PROVIDER_UNAVAILABLE', NULL), IF(i % 100 < 7, 'The AI provider failed', NULL),
       IF(i % 100 >= 10, SHA2(CONCAT('o', i), 256), NULL), ${at} - INTERVAL 5 SECOND, ${at}
     FROM ${src}`,
    `INSERT INTO AiJobSnapshot (id, jobId, schemaVersion, content, contentHash, redactionVersion, expiresAt, createdAt)
     SELECT ${id('01')}, ${id('00')}, 'v1', CONCAT('{"concept":"Concept ', i, '","explanation":"', REPEAT('Energy is conserved. ', 12), '"}'),
       SHA2(CONCAT('s', i), 256), 1, ${at} + INTERVAL 30 DAY, ${at} - INTERVAL 5 SECOND FROM ${src}`,
    `INSERT INTO AiJobTransition (id, jobId, fromStatus, toStatus, actor, reason, leaseVersion, createdAt)
     SELECT ${idWith('02', 'k.s')}, ${id('00')}, ELT(k.s, NULL, 'queued', 'running'), ELT(k.s, 'queued', 'running', ${status}),
       ELT(k.s, CONCAT('user:u', i % ${USERS}), 'consumer-1', 'consumer-1'), ELT(k.s, 'created', 'attempt 1', NULL), IF(k.s = 1, NULL, 1), ${at}
     FROM ${src.replace(') n WHERE', ') n JOIN (SELECT 1 AS s UNION ALL SELECT 2 UNION ALL SELECT 3) k WHERE')}`,
    `INSERT INTO OutboxEvent (id, eventType, aggregateType, aggregateId, dedupeKey, payload, queueName, messageGroupId, status, attemptCount,
       availableAt, publishedAt, createdAt, updatedAt)
     SELECT ${idWith('03', 'k.s')}, IF(k.s = 1, 'ai.job.enqueue', CONCAT('ai.job.', ${status})), 'AiJob', ${id('00')},
       CONCAT(IF(k.s = 1, 'enqueue:', 'terminal:'), ${id('00')}), CONCAT('{"jobId":"', ${id('00')}, '","jobType":"', ${type}, '"}'),
       IF(k.s = 1, 'interactive', NULL), IF(k.s = 1, ${id('00')}, NULL), 'published', 1, ${at}, ${at}, ${at}, ${at}
     FROM ${src.replace(') n WHERE', ') n JOIN (SELECT 1 AS s UNION ALL SELECT 2) k WHERE')}`,
    `INSERT INTO AiUsageLog (id, jobId, userId, attemptNo, provider, model, credentialMode, promptTokens, completionTokens, totalTokens, costUsd,
       priceVersion, latencyMs, createdAt)
     SELECT ${id('04')}, ${id('00')}, CONCAT('u', i % ${USERS}), 1, 'mock', 'mock-model', 'platform_key', 300, 200, 500, 0.00042, 'p1', 900, ${at} - INTERVAL 1 SECOND
     FROM ${src}`,
    `INSERT INTO AiJobArtifact (id, jobId, artifactType, artifactId, ordinal, createdAt)
     SELECT ${id('05')}, ${id('00')}, 'result', ${id('00')}, 0, ${at} FROM ${src} AND i % 100 >= 10`,
  ];
}

/** Inserts the N jobs in chunks. */
export async function seedFinishedJobs(conn: mysql.Connection, n: number): Promise<void> {
  await conn.query('SET SESSION foreign_key_checks = 0, unique_checks = 0');
  try {
    for (let from = 0; from < n; from += CHUNK) {
      for (const sql of statements(n, from, Math.min(CHUNK, n - from))) await conn.query(sql);
    }
  } finally {
    await conn.query('SET SESSION foreign_key_checks = 1, unique_checks = 1');
  }
}

/**
 * The scheduled maintenance caught up on seeded history in one run (rollups and retention, as months of scheduled
 * runs would have left them), with a budget large enough to finish.
 */
export async function catchUpMaintenance(db: PrismaDb): Promise<void> {
  await runMaintenance({ db, registry: jobRegistry, config: { ...DEFAULT_RETENTION, budgetMs: 3_600_000, batchSize: 2_000 }, logger: { info: () => undefined } });
}

/** Bytes (data + indexes, InnoDB's figures after ANALYZE) of the tables a job leaves rows in. */
export async function tableBytes(conn: mysql.Connection): Promise<number> {
  const tables = ['AiJob', 'AiJobSnapshot', 'AiJobTransition', 'OutboxEvent', 'AiUsageLog', 'AiJobArtifact'];
  await conn.query(`ANALYZE TABLE ${tables.join(', ')}`);
  const [rows] = await conn.query<mysql.RowDataPacket[]>(
    `SELECT SUM(DATA_LENGTH + INDEX_LENGTH) AS b FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (${tables.map((t) => `'${t}'`).join(', ')})`,
  );
  return Number(rows[0]?.b ?? 0);
}
