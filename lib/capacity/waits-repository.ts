/**
 * Why a job waits, for its owner and admins: `waitingFor` (`provider_capacity` or `spend_cap`) and until when
 * (the database's clock). JobStatusResponse is frozen (ADR-003 §7.2), so this is read beside it: by the admin job
 * views, which extend it, and for the job's owner by the live stream's status entries (lib/stream/protocol.ts
 * `waitingFor`). A job is waiting while it has a waiting row and no lease (it is between deliveries); once
 * admitted, its row says so and it is not reported.
 */
import { getSqlPool, type SqlPool } from '../db/sql-pool.ts';
import type { WaitingFor } from './capacity-wait.ts';

export interface JobWait {
  waitingFor: WaitingFor;
  /** When the job is due to try again. */
  until: Date;
  /** When it started waiting (this episode). */
  since: Date;
  /** The model it waits for (provider capacity), or null. */
  route: { provider: string; model: string } | null;
}

/** The waits of those of `jobIds` that are waiting now. */
export async function findJobWaits(jobIds: readonly string[], pool: SqlPool = getSqlPool()): Promise<Map<string, JobWait>> {
  if (jobIds.length === 0) return new Map();
  const rows = (await pool.query(
    `SELECT w.jobId, w.reason, w.dueAt, w.since, w.provider, w.model FROM \`CapacityWait\` w JOIN \`AiJob\` j ON j.id = w.jobId
     WHERE w.jobId IN (${jobIds.map(() => '?').join(', ')}) AND w.reason IN ('provider_capacity', 'spend_cap')
       AND j.lifecycleStatus = 'running' AND j.lockedBy IS NULL`,
    [...jobIds],
  )) as { jobId: string; reason: WaitingFor; dueAt: Date; since: Date; provider: string | null; model: string | null }[];
  return new Map(rows.map((r) => [r.jobId, {
    waitingFor: r.reason, until: new Date(r.dueAt), since: new Date(r.since),
    route: r.provider && r.model ? { provider: r.provider, model: r.model } : null,
  }]));
}
