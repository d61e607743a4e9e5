/**
 * `npm run bench:reaper-idle`: what one reaper run costs when nothing is stuck, on a table of BENCH_REAPER_ROWS
 * finished jobs (default 1,000,000; a few open, healthy ones too). Prints the median wall time of each reaper
 * query over 20 runs and the rows MariaDB examined for each (EXPLAIN's estimate), so a full scan shows.
 * Env: DATABASE_URL (server; the bench uses database `aijobs_bench_reaper`, kept between runs), BENCH_REAPER_ROWS.
 */
import { databaseUrlFromEnv, withDatabase } from '../lib/db/database-url.ts';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { createPrismaClient } from '../lib/db/client.ts';
import { createSqlPool } from '../lib/db/sql-pool.ts';
import { DEFAULT_REAPER_OPTIONS, reapExpiredLeases, reapOverdueRetries } from '../lib/engine/reaper.ts';
import { reapUnpickedQueuedJobs } from '../lib/engine/reaper-queued.ts';

const rows = Number(process.env.BENCH_REAPER_ROWS ?? 1_000_000);
const url = withDatabase(databaseUrlFromEnv(), 'aijobs_bench_reaper');
await migrateDatabase(url);
const pool = createSqlPool(url);
const [count] = (await pool.query('SELECT COUNT(*) AS n FROM AiJob')) as { n: bigint }[];
if (Number(count?.n ?? 0) < rows) {
  console.log(`filling AiJob with ${rows} finished jobs…`);
  await pool.query('DELETE FROM AiJob');
  // Finished jobs spread over 90 days; one in 1000 queued or running (healthy: fresh, or leased).
  await pool.query(`
    INSERT INTO AiJob (id, userId, jobType, triggerType, targetType, targetId, inputHash, lifecycleStatus, queueName, priority,
      attemptCount, maxAttempts, timeoutMs, inputSchemaVersion, outputSchemaVersion, promptKey, promptVersion, modelTier,
      credentialMode, lockedBy, lockUntil, leaseVersion, createdAt, updatedAt, finishedAt)
    SELECT LPAD(seq, 26, '0'), CONCAT('user-', seq % 5000), 'synthetic_job', 'user', 'test', 't', REPEAT('0', 64),
      CASE WHEN seq % 1000 = 0 THEN 'queued' WHEN seq % 1000 = 1 THEN 'running' ELSE ELT(1 + seq % 3, 'succeeded', 'failed', 'cancelled') END,
      IF(seq % 2 = 0, 'interactive', 'background'), 50, 1, 3, 30000, 'v1', 'v1', 'synthetic', 'v1', 'fast', 'platform_key',
      IF(seq % 1000 = 1, 'worker', NULL), IF(seq % 1000 = 1, NOW(3) + INTERVAL 1 HOUR, NULL), 1,
      IF(seq % 1000 < 2, NOW(3), NOW(3) - INTERVAL (seq % 90) DAY), NOW(3), IF(seq % 1000 < 2, NULL, NOW(3))
    FROM seq_1_to_${rows}`);
  await pool.query('ANALYZE TABLE AiJob');
}
const db = createPrismaClient(url);
const runs: Record<string, () => Promise<unknown>> = {
  expiredLeases: () => reapExpiredLeases(db, DEFAULT_REAPER_OPTIONS),
  overdueRetries: () => reapOverdueRetries(db, DEFAULT_REAPER_OPTIONS),
  unpickedQueued: () => reapUnpickedQueuedJobs(db, DEFAULT_REAPER_OPTIONS),
};
for (const [name, run] of Object.entries(runs)) {
  const times: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`${name}: median ${times[10]!.toFixed(2)} ms, max ${times[19]!.toFixed(2)} ms`);
}
const cutoff = new Date(Date.now() - 60_000);
for (const sql of [
  "SELECT id FROM AiJob WHERE lifecycleStatus = 'running' AND lockedBy IS NOT NULL AND lockUntil < ? ORDER BY lockUntil LIMIT 200",
  "SELECT id FROM AiJob WHERE lifecycleStatus = 'running' AND lockedBy IS NULL AND (lockUntil < ? OR (lockUntil IS NULL AND updatedAt < ?)) ORDER BY lockUntil LIMIT 200",
  "SELECT id FROM AiJob WHERE queueName = 'interactive' AND lifecycleStatus = 'queued' AND createdAt < ? ORDER BY createdAt LIMIT 200",
]) {
  const [plan] = (await pool.query(`EXPLAIN ${sql}`, [cutoff, cutoff])) as { type: string; key: string; rows: number }[];
  console.log(`rows examined ~${plan!.rows} (${plan!.type} on ${plan!.key}): ${sql.slice(0, 90)}…`);
}
await db.$disconnect();
await pool.end();
