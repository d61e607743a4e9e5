/**
 * What both graphile-worker peers (./graphile-peer.ts, ./graphile-kept-peer.ts) are made of: a worker pool and a
 * client pool on the database, a runner of one task (LISTEN/NOTIFY hand-off, default 2 s poll for retries), and
 * client transactions.
 */
import pg from 'pg';
import { Logger, run, type Runner, type Task } from 'graphile-worker';
import type { PeerSystem } from './peer-system.ts';

const silent = new Logger(() => () => undefined);

export interface GraphileBase {
  workerPool: pg.Pool;
  clientPool: pg.Pool;
  /** Starts the runner with `task` as `name`. */
  start(name: string, task: Task): Promise<void>;
  stop(): Promise<void>;
  /** The peer these pools and this runner make, PostgreSQL its one database server. */
  peer(o: Pick<PeerSystem, 'name' | 'timings' | 'rowsPerJob'> & { submit(payload: Parameters<PeerSystem['submit']>[0], client: pg.PoolClient): Promise<void> }): PeerSystem;
}

/**
 * The pools of a peer called `system` (the worker's sized for `concurrency`, the clients' for `clients`); its
 * {@link GraphileBase.peer} runs each submission as one transaction on a client of the clients' pool.
 */
export function graphileBase(system: string, o: { databaseUrl: string; concurrency: number; clients: number }): GraphileBase {
  const workerPool = new pg.Pool({ connectionString: o.databaseUrl, max: o.concurrency + 2 });
  const clientPool = new pg.Pool({ connectionString: o.databaseUrl, max: o.clients });
  for (const pool of [workerPool, clientPool]) {
    const onError = (err: Error) => console.error(`${system} bench pool: ${err.message}`);
    pool.on('error', onError);
    pool.on('connect', (client) => client.on('error', onError));
  }
  let runner: Runner | undefined;
  return {
    workerPool,
    clientPool,
    async start(name, task) {
      runner = await run({ pgPool: workerPool, concurrency: o.concurrency, noHandleSignals: true, logger: silent, taskList: { [name]: task } });
    },
    async stop() {
      await runner?.stop();
      await Promise.all([workerPool.end(), clientPool.end()]);
    },
    peer(p) {
      return {
        name: p.name, timings: p.timings, servers: ['postgres'], rowsPerJob: p.rowsPerJob,
        submit: (payload) => inTransaction(clientPool, (client) => p.submit(payload, client)),
        stop: () => this.stop(),
      };
    },
  };
}

/** Runs `body` in one transaction on a client of `pool`, rolled back if it throws. */
export async function inTransaction<T>(pool: pg.Pool, body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await body(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
