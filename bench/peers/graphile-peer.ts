/**
 * graphile-worker (PostgreSQL) as a peer: transactional enqueue — one transaction inserting the business row
 * (the request's user and input) and calling `graphile_worker.add_job` (its documented SQL API, on the same
 * client) with as many attempts as our definition allows — and a runner (LISTEN/NOTIFY hand-off, default 2 s
 * poll for retries) whose task is ./peer-task.ts, writing the workload's result rows through the runner's own pool (`withPgClient`).
 */
import pg from 'pg';
import { Logger, run, type Runner } from 'graphile-worker';
import { mockClient, newTimings, runPeerJob, type PeerPayload } from './peer-task.ts';
import type { PeerSystem } from './peer-system.ts';
import type { BenchWorkload } from './workload.ts';

const TASK = 'bench_peer_job';
const silent = new Logger(() => () => undefined);

export async function startGraphilePeer(o: { databaseUrl: string; mockAiUrl: string; workload: BenchWorkload; concurrency: number; clients: number }): Promise<PeerSystem> {
  const timings = newTimings();
  const ai = mockClient(o.mockAiUrl);
  const workerPool = new pg.Pool({ connectionString: o.databaseUrl, max: o.concurrency + 2 });
  const clientPool = new pg.Pool({ connectionString: o.databaseUrl, max: o.clients });
  for (const pool of [workerPool, clientPool]) {
    const onError = (err: Error) => console.error(`graphile-worker bench pool: ${err.message}`);
    pool.on('error', onError);
    pool.on('connect', (client) => client.on('error', onError));
  }
  const runner: Runner = await run({
    pgPool: workerPool, concurrency: o.concurrency, noHandleSignals: true, logger: silent,
    taskList: {
      [TASK]: (payload, helpers) => runPeerJob('graphile-worker', o.workload, payload as PeerPayload, ai,
        (sql, values) => helpers.withPgClient((c) => c.query(sql, values)), timings),
    },
  });
  return {
    name: 'graphile-worker',
    timings,
    servers: ['postgres'],
    rowsPerJob: { inserted: 2, deleted: 1 },
    async submit(payload) {
      const client = await clientPool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO peer_request (system, job_key, user_id, input) VALUES ($1, $2, $3, $4)',
          ['graphile-worker', payload.key, payload.userId, JSON.stringify(o.workload.input(payload.runId, payload.i))]);
        await client.query('SELECT graphile_worker.add_job($1, $2::json, max_attempts => $3)', [TASK, JSON.stringify(payload), o.workload.maxAttempts]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async stop() {
      await runner.stop();
      await Promise.all([workerPool.end(), clientPool.end()]);
    },
  };
}
