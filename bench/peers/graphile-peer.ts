/**
 * graphile-worker (PostgreSQL) as a peer: transactional enqueue — one transaction inserting the business row
 * (the request's user and input) and calling `graphile_worker.add_job` (its documented SQL API, on the same
 * client) with as many attempts as our definition allows — and a runner (LISTEN/NOTIFY hand-off, default 2 s
 * poll for retries) whose task is ./peer-task.ts, writing the workload's result rows through the runner's own pool (`withPgClient`).
 */
import { mockClient, newTimings, runPeerJob, type PeerPayload } from './peer-task.ts';
import { graphileBase } from './graphile-base.ts';
import type { PeerSystem } from './peer-system.ts';
import type { BenchWorkload } from './workload.ts';

const TASK = 'bench_peer_job';

export async function startGraphilePeer(o: { databaseUrl: string; mockAiUrl: string; workload: BenchWorkload; concurrency: number; clients: number }): Promise<PeerSystem> {
  const timings = newTimings();
  const ai = mockClient(o.mockAiUrl);
  const base = graphileBase('graphile-worker', o);
  await base.start(TASK, (payload, helpers) => runPeerJob('graphile-worker', o.workload, payload as PeerPayload, ai,
    (sql, values) => helpers.withPgClient((c) => c.query(sql, values)), timings));
  return base.peer({
    name: 'graphile-worker',
    timings,
    rowsPerJob: { inserted: 2, deleted: 1 },
    async submit(payload, client) {
      await client.query('INSERT INTO peer_request (system, job_key, user_id, input) VALUES ($1, $2, $3, $4)',
        ['graphile-worker', payload.key, payload.userId, JSON.stringify(o.workload.input(payload.runId, payload.i))]);
      await client.query('SELECT graphile_worker.add_job($1, $2::json, max_attempts => $3)', [TASK, JSON.stringify(payload), o.workload.maxAttempts]);
    },
  });
}
