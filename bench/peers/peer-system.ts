/** A peer queue under the bench: submits one job, records its handler's instants, stops cleanly. */
import type { PeerPayload, PeerTimings } from './peer-task.ts';

export interface PeerSystem {
  name: string;
  timings: PeerTimings;
  /**
   * Rows each job's enqueue and completion are known to insert and delete in the PostgreSQL database besides its
   * result rows (graphile-worker: the request row and its job row, deleted when done), the floor the database
   * counters must reach before they are read (./db-cost.ts).
   */
  rowsPerJob: { inserted: number; deleted: number };
  /** The database servers it keeps its state in: their CPU is its database CPU. */
  servers: readonly ('postgres' | 'redis')[];
  /**
   * Called before a run (untimed) with the users its jobs will be submitted as: a peer with an API in front signs
   * their tokens here, as ours' are signed before its runs (bench/peers.ts).
   */
  prepareUsers?(userIds: string[]): Promise<void>;
  /** Resolves once the job is durably enqueued. */
  submit(payload: PeerPayload): Promise<void>;
  stop(): Promise<void>;
}
