/**
 * The capacity sweeper, run by the reaper every minute (lib/engine/reaper-run.ts): a consumer that died holding
 * a reservation does not leak it. Each step reads through an index and works in bounded batches.
 * - Expired holds (`expiresAt`, the job's timeout plus a margin after the reservation): a `held` one is settled
 *   as a call that used nothing — its tokens come back to their window, the call leaves the calls in flight, its
 *   reserved cost comes back to every cap (a call that did happen but whose consumer died before writing its
 *   ledger row is thereby not counted: docs/budgets.md, "What is estimated"); a `pending` one (its reservation
 *   refused, the refusal's clean-up never ran) is deleted.
 * - Minute windows older than an hour, waiting rows of finished jobs, spend counters of periods over 62 days ago.
 */
import { getSqlPool, runAtomically, type SqlPool } from '../db/sql-pool.ts';
import { DATABASE_CLOCK, withClock, type DbClock } from './db-clock.ts';
import { settlementStatements } from './settle-statements.ts';

export interface CapacitySweepCounts {
  /** Held reservations that expired and were given back. */
  holdsExpired: number;
  windowsDeleted: number;
  waitsDeleted: number;
  countersDeleted: number;
}

export interface SweepOptions {
  limit?: number;
  clock?: DbClock;
  pool?: SqlPool;
}

const TERMINAL = "('succeeded', 'failed', 'cancelled')";

export async function sweepCapacity(opts: SweepOptions = {}): Promise<CapacitySweepCounts> {
  const pool = opts.pool ?? getSqlPool();
  const clock = opts.clock ?? DATABASE_CLOCK;
  const limit = opts.limit ?? 500;
  const query = async (template: string, values: (string | number)[] = []) => {
    const s = withClock(template, clock, values);
    return pool.query(s.sql, s.values) as Promise<unknown>;
  };
  const expired = (await query('SELECT holdKey, state FROM `CapacityHold` WHERE expiresAt < {now} ORDER BY expiresAt LIMIT ?', [limit])) as { holdKey: string; state: string }[];
  let holdsExpired = 0;
  for (const hold of expired) {
    if (hold.state === 'held') {
      const results = await runAtomically(settlementStatements(hold.holdKey, { tokens: 0, costUsd: '0.00000000' }), pool);
      holdsExpired += Number((results.at(-1) as { affectedRows?: number }).affectedRows ?? 0);
    } else {
      await pool.query("DELETE FROM `CapacityHold` WHERE holdKey = ? AND state = 'pending'", [hold.holdKey]);
    }
  }
  const deleted = (r: unknown) => Number((r as { affectedRows?: number }).affectedRows ?? 0);
  const windows = deleted(await query('DELETE FROM `ProviderWindow` WHERE windowStart < {now} - INTERVAL 1 HOUR LIMIT ?', [limit]))
    + deleted(await query('DELETE FROM `ProviderUserWindow` WHERE windowStart < {now} - INTERVAL 1 HOUR LIMIT ?', [limit]));
  const finished = (await query(
    `SELECT w.jobId FROM \`CapacityWait\` w LEFT JOIN \`AiJob\` j ON j.id = w.jobId
     WHERE w.dueAt < {now} - INTERVAL 1 HOUR AND (j.id IS NULL OR j.lifecycleStatus IN ${TERMINAL}) LIMIT ?`, [limit],
  )) as { jobId: string }[];
  const waits = finished.length
    ? deleted(await pool.query(`DELETE FROM \`CapacityWait\` WHERE jobId IN (${finished.map(() => '?').join(', ')})`, finished.map((r) => r.jobId)))
    : 0;
  const counters = deleted(await query('DELETE FROM `SpendCounter` WHERE periodStart < DATE({now}) - INTERVAL 62 DAY LIMIT ?', [limit]));
  return { holdsExpired, windowsDeleted: windows, waitsDeleted: waits, countersDeleted: counters };
}
