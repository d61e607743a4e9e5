/**
 * Claiming outbox rows (ADR-003 §4.3, corrected): a row is sent only by the dispatcher that moved it
 * `pending → processing` under its own holder id. A claim that loses is skipped, never sent. This fixes the
 * publish-before-claim race of the old system (audit #284), where two pollers could send the same row.
 *
 * Invariant: every write here is a compare-and-set on `status`; nothing here sends anything.
 * The per-cycle statements are raw SQL through Prisma (no query compilation): they run for every batch.
 */
import type { Db, OutboxEvent } from '../db/client.ts';
import { readCommitted } from './read-committed.ts';

/** The columns a dispatcher needs to send and settle a row. */
export type DispatchRow = Pick<
  OutboxEvent,
  'id' | 'eventType' | 'aggregateType' | 'aggregateId' | 'dedupeKey' | 'payload' | 'queueName' | 'messageGroupId' | 'attemptCount'
>;

/** A row this dispatcher holds: `status = processing`, `lockedBy = holder`. */
export type ClaimedOutboxEvent = DispatchRow & { lockedBy: string; lockedAt: Date };

/** Who claims and when. `holder` is unique per claim so a late settle can never touch a newer claim. */
export interface ClaimContext {
  holder: string;
  now: Date;
}

const DISPATCH_COLUMNS = 'id, eventType, aggregateType, aggregateId, dedupeKey, payload, queueName, messageGroupId, attemptCount';

/** `?, ?, ?` for a parameter list. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}

/**
 * Claims up to `limit` due rows (`pending`, `availableAt <= now`), oldest first. `FOR UPDATE SKIP LOCKED`
 * gives concurrent dispatchers disjoint rows without waiting on each other; the update then marks them
 * `processing` with holder and time in the same transaction, so the claim outlives the transaction.
 * READ COMMITTED: see ./read-committed.ts.
 */
export async function claimDueOutboxBatch(db: Db, claim: ClaimContext, limit: number): Promise<ClaimedOutboxEvent[]> {
  return readCommitted(db, async (tx) => {
    const rows = await tx.$queryRawUnsafe<DispatchRow[]>(
      `SELECT ${DISPATCH_COLUMNS} FROM OutboxEvent
       WHERE status = 'pending' AND availableAt <= ?
       ORDER BY availableAt, id LIMIT ? FOR UPDATE SKIP LOCKED`,
      claim.now, limit,
    );
    if (rows.length === 0) return [];
    // These rows are locked by this transaction, so they are still `pending`: the primary key suffices.
    await tx.$executeRawUnsafe(
      `UPDATE OutboxEvent SET status = 'processing', lockedBy = ?, lockedAt = ?, updatedAt = ? WHERE id IN (${placeholders(rows.length)})`,
      claim.holder, claim.now, claim.now, ...rows.map((r) => r.id),
    );
    return rows.map((r) => ({ ...r, lockedBy: claim.holder, lockedAt: claim.now }));
  });
}

/**
 * Claims one row by id for eager dispatch right after its creating transaction committed. Returns null
 * when the row is not due or someone else holds it (the scheduled dispatcher, or it was already sent).
 */
export async function claimOutboxEventById(db: Db, id: string, claim: ClaimContext): Promise<ClaimedOutboxEvent | null> {
  const { count } = await db.outboxEvent.updateMany({
    where: { id, status: 'pending', availableAt: { lte: claim.now } },
    data: { status: 'processing', lockedBy: claim.holder, lockedAt: claim.now },
  });
  if (count === 0) return null;
  const row = await db.outboxEvent.findUnique({ where: { id } });
  // Re-checked: between the update and this read only our holder can have changed the row.
  if (!row || row.status !== 'processing' || row.lockedBy !== claim.holder) return null;
  return { ...row, lockedBy: claim.holder, lockedAt: claim.now };
}

/**
 * Releases rows stuck in `processing` since before `lockedBefore` (their dispatcher crashed or timed out
 * between claim and settle) back to `pending`, keeping their place in line. Their attempt count is
 * unchanged: nothing is known to have failed. A re-send after an unnoticed success is harmless within the
 * FIFO dedupe window (5 min), which is far longer than the lock TTL (60 s).
 *
 * Runs every cycle, so the common case (nothing expired) must take no locks: a plain read finds candidates,
 * and only those are released by primary key, re-checking the expiry (a compare-and-set). A locking scan of
 * the `(status, lockedAt)` index here deadlocked against dispatchers publishing fresh rows.
 * @returns how many rows were released.
 */
export async function releaseExpiredOutboxLocks(db: Db, lockedBefore: Date, limit = 1_000): Promise<number> {
  const expired = await db.$queryRawUnsafe<{ id: string }[]>(
    "SELECT id FROM OutboxEvent WHERE status = 'processing' AND lockedAt < ? ORDER BY lockedAt LIMIT ?",
    lockedBefore, limit,
  );
  if (expired.length === 0) return 0;
  const { count } = await readCommitted(db, (tx) => tx.outboxEvent.updateMany({
    where: { id: { in: expired.map((r) => r.id) }, status: 'processing', lockedAt: { lt: lockedBefore } },
    data: { status: 'pending', lockedBy: null, lockedAt: null },
  }));
  return count;
}
