/**
 * `npm run bench:create`: jobs created per second through the engine's createJob (validation, redaction,
 * hashing, one Prisma transaction writing job + transition + snapshot + outbox) at concurrency 8, beside raw
 * three-insert transactions (job, snapshot, outbox) through mysql2 on the same database in the same run.
 * Eager dispatch is off: this measures creation, not SQS. Last line: create_ratio=<engine/raw>.
 *
 * Env: DATABASE_URL (server; the bench uses database `aijobs_bench`), BENCH_SECONDS (default 10), BENCH_CONCURRENCY (8).
 */
import mysql from 'mysql2/promise';
import { randomUUID } from 'node:crypto';
import { closePrisma } from '../lib/db/client.ts';
import { closeSqlPool } from '../lib/db/sql-pool.ts';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../lib/db/database-url.ts';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { newId } from '../lib/db/ids.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const url = withDatabase(databaseUrlFromEnv(), 'aijobs_bench');
process.env.DATABASE_URL = `${url}?connectionLimit=${concurrency}`;
await migrateDatabase(url);
const { createJob } = await import('../lib/jobs/create-job.ts');

const s = parseDatabaseUrl(url);
const pool = mysql.createPool({ host: s.host, port: s.port, user: s.user, password: s.password, database: s.database, connectionLimit: concurrency, timezone: 'Z' });

async function truncate() {
  await pool.query('SET FOREIGN_KEY_CHECKS = 0');
  for (const t of ['AiJobTransition', 'AiJobSnapshot', 'OutboxEvent', 'AiJob']) await pool.query(`DELETE FROM \`${t}\``);
  await pool.query('SET FOREIGN_KEY_CHECKS = 1');
}

/** Runs `op` in `concurrency` loops for `seconds`; returns completed operations per second. */
async function measure(op: (i: number) => Promise<void>): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    for (let i = 0; performance.now() < deadline; i += 1) {
      await op(w * 1_000_000 + i);
      done += 1;
    }
  }));
  return done / ((performance.now() - started) / 1000);
}

const engine = (i: number) =>
  createJob(
    { userId: `bench-${i % 100}`, jobType: 'synthetic_job', triggerType: 'user', targetType: 'bench', targetId: String(i), idempotencyKey: randomUUID(), input: { prompt: `Question number ${i}: explain it` } },
    { eagerDispatch: null },
  ).then(() => undefined);

async function raw(i: number): Promise<void> {
  const conn = await pool.getConnection();
  try {
    const id = newId();
    const now = new Date();
    await conn.beginTransaction();
    await conn.execute(
      `INSERT INTO AiJob (id, userId, jobType, triggerType, targetType, targetId, idempotencyKey, inputHash, lifecycleStatus, queueName, priority, maxAttempts, timeoutMs, inputSchemaVersion, outputSchemaVersion, promptKey, promptVersion, modelTier, credentialMode, createdAt, updatedAt)
       VALUES (?, ?, 'synthetic_job', 'user', 'bench', ?, ?, ?, 'queued', 'interactive', 50, 3, 30000, 'v1', 'v1', 'synthetic', 'v1', 'fast', 'platform_key', ?, ?)`,
      [id, `bench-${i % 100}`, String(i), randomUUID(), '0'.repeat(64), now, now],
    );
    await conn.execute(
      'INSERT INTO AiJobSnapshot (id, jobId, schemaVersion, content, contentHash, redactionVersion) VALUES (?, ?, ?, ?, ?, 1)',
      [newId(), id, 'v1', JSON.stringify({ prompt: `Question number ${i}: explain it` }), '0'.repeat(64)],
    );
    await conn.execute(
      "INSERT INTO OutboxEvent (id, eventType, aggregateType, aggregateId, dedupeKey, payload, queueName, messageGroupId, availableAt, updatedAt) VALUES (?, 'ai.job.enqueue', 'AiJob', ?, ?, ?, 'interactive', ?, ?, ?)",
      [newId(), id, `ai.job.enqueue:${id}`, JSON.stringify({ jobId: id }), id, now, now],
    );
    await conn.commit();
  } catch (err) {
    await conn.rollback();
    throw err;
  } finally {
    conn.release();
  }
}

await truncate();
await measure(engine); // warm-up (JIT, pools) — discarded
await truncate();
const engineRate = await measure(engine);
await truncate();
const rawRate = await measure(raw);
await truncate();
console.log(`concurrency=${concurrency} seconds=${seconds}`);
console.log(`engine_creates_per_s=${engineRate.toFixed(1)}`);
console.log(`raw_3insert_tx_per_s=${rawRate.toFixed(1)}`);
console.log(`create_ratio=${(engineRate / rawRate).toFixed(2)}`);
await pool.end();
await closePrisma();
await closeSqlPool();
