/**
 * What the dispatch benchmarks share: an SQS server in its own process, fresh queues, a pre-filled outbox of
 * queued jobs, and real dispatchers draining it (bench/dispatch.ts measures rows per second,
 * bench/dispatch-db-cost.ts the database's instructions per row).
 */
import { spawn } from 'node:child_process';
import type mysql from 'mysql2/promise';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { Logger } from '@aws-lambda-powertools/logger';
import { createPrismaClient } from '../lib/db/client.ts';
import { createSqlPool } from '../lib/db/sql-pool.ts';
import { newId } from '../lib/db/ids.ts';
import { createJobQueues } from '../lib/queue/create-queues.ts';
import { runScheduledDispatch } from '../lib/outbox/dispatcher.ts';
import { createDispatcherDeps, type DispatchPolicy } from '../lib/outbox/dispatcher-deps.ts';
import { createOutboxRoutes } from '../lib/outbox/routes.ts';
import { freePort, waitFor } from '../test/helpers/ports.ts';

export type QueueUrls = Record<'interactive' | 'background', string>;

/** An SQS client for the bench's server (credentials are placeholders: emulators accept anything). */
export function benchSqsClient(endpoint: string): SQSClient {
  return new SQSClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
}

/** fauxqs as a child process on a free port (so it does not share the bench's CPU), unless an SQS endpoint is configured. */
export async function startSqsServer(): Promise<{ endpoint: string; stop(): void }> {
  const configured = process.env.AWS_ENDPOINT_URL_SQS?.trim();
  if (configured) return { endpoint: configured, stop: () => undefined };
  const port = await freePort();
  const server = spawn(process.execPath, ['--input-type=module', '-e',
    `import { startFauxqs } from 'fauxqs'; await startFauxqs({ port: ${port}, host: '127.0.0.1', logger: false });`], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await benchSqsClient(endpoint).send(new ListQueuesCommand({})), true), `fauxqs on ${endpoint}`);
  return { endpoint, stop: () => server.kill() };
}

/** A new pair of job queues (unique names, so each measurement starts from empty queues). */
export async function freshQueues(endpoint: string): Promise<QueueUrls> {
  const created = await createJobQueues(benchSqsClient(endpoint), `bench-${newId().slice(-10).toLowerCase()}`);
  return { interactive: created.interactive.queueUrl, background: created.background.queueUrl };
}

/** Empties the job tables and pre-fills `count` queued jobs with their enqueue rows (multi-row INSERTs). */
export async function prefillOutbox(pool: mysql.Pool, count: number): Promise<void> {
  // TRUNCATE, not DELETE: a DELETE of the last round's rows leaves InnoDB purge work that would run, and be
  // billed to the dispatcher, during the measurement. One connection, so the FK switch applies to it.
  const conn = await pool.getConnection();
  try {
    await conn.query('SET FOREIGN_KEY_CHECKS = 0');
    for (const t of ['AiJobTransition', 'OutboxEvent', 'AiJob']) await conn.query(`TRUNCATE TABLE \`${t}\``);
    await conn.query('SET FOREIGN_KEY_CHECKS = 1');
  } finally {
    conn.release();
  }
  const now = new Date();
  for (let i = 0; i < count; i += 1_000) {
    const ids = Array.from({ length: Math.min(1_000, count - i) }, () => newId());
    const queue = (j: number) => (j % 2 === 0 ? 'interactive' : 'background');
    await pool.query(
      'INSERT INTO AiJob (id, userId, jobType, triggerType, targetType, targetId, inputHash, lifecycleStatus, queueName, priority, maxAttempts, timeoutMs, inputSchemaVersion, outputSchemaVersion, promptKey, promptVersion, modelTier, credentialMode, createdAt, updatedAt) VALUES ?',
      [ids.map((id, j) => [id, 'bench', 'synthetic_job', 'user', 'bench', 't', '0'.repeat(64), 'queued', queue(j), 50, 3, 30_000, 'v1', 'v1', 'synthetic', 'v1', 'fast', 'platform_key', now, now])],
    );
    await pool.query(
      'INSERT INTO OutboxEvent (id, eventType, aggregateType, aggregateId, dedupeKey, payload, queueName, messageGroupId, status, attemptCount, availableAt, createdAt, updatedAt) VALUES ?',
      [ids.map((id, j) => [newId(), 'ai.job.enqueue', 'AiJob', id, `ai.job.enqueue:${id}`, JSON.stringify({ jobId: id }), queue(j), id, 'pending', 0, now, now, now])],
    );
  }
  await settleUndoHistory(pool);
}

/**
 * Waits (≤ `timeoutMs`) until InnoDB has purged old row versions, so that work lands where it belongs: not in
 * the next measurement (after a prefill), or inside this one (after a dispatch).
 */
export async function settleUndoHistory(pool: mysql.Pool, timeoutMs = 15_000): Promise<void> {
  for (let waited = 0; waited < timeoutMs; waited += 100) {
    const [rows] = await pool.query("SELECT `COUNT` AS n FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'");
    if (Number((rows as { n: number }[])[0]?.n ?? 0) < 50) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const silent = new Logger({ serviceName: 'bench', logLevel: 'SILENT' });
const noMetrics = { addMetric: () => undefined, publishStoredMetrics: () => undefined };

/**
 * Drains the outbox with `dispatchers` concurrent dispatchers (each with its own pools and SQS client, each one
 * scheduled run after another, as the Lambda does it, until a run claims nothing). `measure` wraps only the
 * draining: connections are opened before it. @returns rows published.
 */
export async function drainOutbox(opts: {
  url: string; sqsEndpoint: string; queueUrls: QueueUrls; dispatchers: number; policy: Partial<DispatchPolicy>;
  measure: <T>(drain: () => Promise<T>) => Promise<T>;
}): Promise<number> {
  const clients = Array.from({ length: opts.dispatchers }, () => createPrismaClient(`${opts.url}?connectionLimit=4`));
  const pools = Array.from({ length: opts.dispatchers }, () => createSqlPool(`${opts.url}?connectionLimit=4`));
  const deps = clients.map((db, i) => createDispatcherDeps({
    db, sql: pools[i], logger: silent, metrics: noMetrics, instanceId: `bench-${i}`, policy: opts.policy,
    routes: createOutboxRoutes({ sqs: benchSqsClient(opts.sqsEndpoint), queueUrls: opts.queueUrls, eventBridge: new EventBridgeClient({}), eventBusName: 'unused' }),
  }));
  try {
    await Promise.all([...clients.map((c) => c.$queryRaw`SELECT 1`), ...pools.map((p) => Promise.all(Array.from({ length: 4 }, () => p.query('SELECT 1'))))]);
    const published = await opts.measure(() => Promise.all(deps.map(async (d) => {
      let n = 0;
      for (;;) {
        const run = await runScheduledDispatch(d, { remainingTimeMs: () => 3_600_000 });
        n += run.published;
        if (run.claimed === 0) return n;
      }
    })));
    return published.reduce((a, b) => a + b, 0);
  } finally {
    await Promise.all([...clients.map((c) => c.$disconnect()), ...pools.map((p) => p.end())]);
  }
}
