/**
 * BullMQ (Redis) as a peer: `queue.add` (no business row: BullMQ's enqueue cannot share a transaction with
 * one), as many attempts as our definition allows, removed on completion (graphile-worker deletes completed
 * jobs too); a Worker whose processor is ./peer-task.ts, writing the result rows to the same PostgreSQL
 * database as graphile-worker's (one autocommit INSERT through its own pool), so both peers pay the same
 * durable result write. Its own queue name and key prefix; obliterated at stop.
 */
import pg from 'pg';
import { Queue, Worker } from 'bullmq';
import { mockClient, newTimings, runPeerJob, type PeerPayload } from './peer-task.ts';
import type { PeerSystem } from './peer-system.ts';
import type { BenchWorkload } from './workload.ts';

const QUEUE = 'bench-peers';
const PREFIX = 'aijobs-bench-peers';

export async function startBullmqPeer(o: { databaseUrl: string; mockAiUrl: string; workload: BenchWorkload; redis: { host: string; port: number }; concurrency: number }): Promise<PeerSystem> {
  const timings = newTimings();
  const ai = mockClient(o.mockAiUrl);
  const pool = new pg.Pool({ connectionString: o.databaseUrl, max: o.concurrency });
  pool.on('error', (err) => console.error(`bullmq bench pool: ${err.message}`));
  const connection = { ...o.redis, maxRetriesPerRequest: null };
  const queue = new Queue<PeerPayload>(QUEUE, { connection, prefix: PREFIX });
  await queue.obliterate({ force: true });
  const worker = new Worker<PeerPayload>(QUEUE, (job) => runPeerJob('bullmq', o.workload, job.data, ai, (sql, values) => pool.query(sql, values), timings),
    { connection, prefix: PREFIX, concurrency: o.concurrency });
  await worker.waitUntilReady();
  return {
    name: 'bullmq',
    timings,
    servers: ['redis', 'postgres'],
    rowsPerJob: { inserted: 0, deleted: 0 },
    async submit(payload) {
      await queue.add('job', payload, { attempts: o.workload.maxAttempts, removeOnComplete: true, removeOnFail: 1000 });
    },
    async stop() {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
      await pool.end();
    },
  };
}
