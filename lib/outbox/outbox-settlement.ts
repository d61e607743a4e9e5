/**
 * Settling leased outbox rows (eager dispatch, and rows a held batch handed off to be given up): `published`,
 * back to `pending` with a backoff, or given up (`dead` after too many attempts, `failed` when it can never
 * be sent). A held batch settles its other rows in its own transaction (./held-claim.ts).
 *
 * Invariant: only the holder of the lease settles it — every update matches `lockedBy = holder`, a value
 * unique to one claim and cleared whenever the row leaves that claim (retry, give-up, expiry release).
 * If the lock expired and another dispatcher re-claimed the row, our late settle matches nothing and
 * changes nothing (the re-send is deduplicated by SQS FIFO).
 *
 * Every statement finds its rows by primary key, so it locks only those rows: no gap locks, no deadlocks
 * with dispatchers claiming or settling their own rows.
 */
import type { Db, Prisma } from '../db/client.ts';
import { affectedRows, type SqlPool } from '../db/sql-pool.ts';
import { OUTBOX_BY_ID, placeholders, type ClaimedOutboxEvent, type DispatchRow } from './outbox-claims.ts';
import { retriedTransaction } from './retried-transaction.ts';

/** `lastError` column width. */
const LAST_ERROR_MAX = 1024;

/**
 * Marks rows sent by `holder` as `published` (one statement on the raw pool: run for every eager dispatch).
 * The holder keeps its name on the row as the record of who published it.
 * @returns how many rows were still ours to mark.
 */
export async function markOutboxPublished(sql: SqlPool, ids: readonly string[], holder: string, now: Date): Promise<number> {
  if (ids.length === 0) return 0;
  // `lockedBy = holder` means our lease, or a row we already published (see the invariant above).
  return affectedRows(await sql.query(
    `UPDATE ${OUTBOX_BY_ID} SET status = 'published', publishedAt = ?, lastError = NULL, updatedAt = ?
     WHERE id IN (${placeholders(ids.length)}) AND lockedBy = ?`,
    [now, now, ...ids, holder],
  ));
}

/** Which of `ids` are `published` under `holder` (after {@link markOutboxPublished} marked fewer than asked). */
export async function publishedUnder(sql: SqlPool, ids: readonly string[], holder: string): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = (await sql.query(
    `SELECT id FROM ${OUTBOX_BY_ID} WHERE id IN (${placeholders(ids.length)}) AND lockedBy = ? AND status = 'published'`, [...ids, holder],
  )) as { id: string }[];
  return rows.map((r) => r.id);
}

/**
 * Returns rows whose send failed to `pending` (one statement for rows failing alike): one more attempt
 * counted, due again at `availableAt`.
 * @returns how many rows were still ours to return.
 */
export async function scheduleOutboxRetry(
  sql: SqlPool, ids: readonly string[], holder: string, retry: { availableAt: Date; error: string; now: Date },
): Promise<number> {
  if (ids.length === 0) return 0;
  return affectedRows(await sql.query(
    `UPDATE ${OUTBOX_BY_ID} SET status = 'pending', attemptCount = attemptCount + 1, availableAt = ?,
       lockedBy = NULL, lockedAt = NULL, lastError = ?, updatedAt = ?
     WHERE id IN (${placeholders(ids.length)}) AND lockedBy = ?`,
    [retry.availableAt, retry.error.slice(0, LAST_ERROR_MAX), retry.now, ...ids, holder],
  ));
}

/** How a row is given up. */
export interface GiveUp {
  /** `dead`: attempts exhausted. `failed`: the row can never be sent (unknown type, bad payload). */
  status: 'dead' | 'failed';
  /** Stored in `lastError` and passed to `onGiveUp`; a code first, e.g. `UNKNOWN_EVENT_TYPE: …`. */
  reason: string;
  /** Whether this give-up followed a send attempt (then `attemptCount` is incremented). */
  attempted: boolean;
  /** Work that must commit with the give-up, e.g. failing the job that waits on this row. */
  onGiveUp?: (tx: Prisma.TransactionClient, row: DispatchRow, reason: string) => Promise<void>;
}

/**
 * Gives a row up and runs its route's hook in the same transaction, so the row and whatever depended on it
 * change together or not at all.
 * @returns false when the row was no longer ours (nothing was written).
 */
export async function giveUpOutboxEvent(db: Db, row: ClaimedOutboxEvent, giveUp: GiveUp): Promise<boolean> {
  const reason = giveUp.reason.slice(0, LAST_ERROR_MAX);
  return retriedTransaction(db, async (tx) => {
    const { count } = await tx.outboxEvent.updateMany({
      where: { id: row.id, status: 'processing', lockedBy: row.lockedBy },
      data: {
        status: giveUp.status, lastError: reason, lockedBy: null, lockedAt: null,
        ...(giveUp.attempted ? { attemptCount: { increment: 1 } } : {}),
      },
    });
    if (count === 0) return false;
    await giveUp.onGiveUp?.(tx, row, reason);
    return true;
  });
}
