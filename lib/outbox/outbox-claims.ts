/**
 * Claiming outbox rows (ADR-003 §4.3, corrected): a row is sent only by the dispatcher that claimed it, and
 * a claim that loses is skipped, never sent. This fixes the publish-before-claim race of the old system
 * (audit #284), where two pollers could send the same row.
 *
 * Two kinds of claim: the scheduled dispatcher locks a batch with `FOR UPDATE SKIP LOCKED` and holds the lock
 * until the batch is settled (./held-claim.ts); eager dispatch, and rows handed off for giving up, take a
 * lease — a compare-and-set `pending → processing` with holder and time, committed — released by
 * {@link releaseExpiredOutboxLocks} when its holder never settles it.
 *
 * Invariant: every write here is a compare-and-set on `status`; nothing here sends anything.
 * These statements run for every batch and every created job, so they use the raw driver pool
 * (../db/sql-pool.ts) in as few round trips as the locking allows: bench:dispatch measured Prisma's
 * per-query cost here as a fifth of the dispatcher's CPU.
 */
import type { OutboxEvent } from '../db/client.ts';
import { affectedRows, retryOnDeadlock, withSqlConnection, type SqlPool } from '../db/sql-pool.ts';

/** The columns a dispatcher needs to send and settle a row. */
export type DispatchRow = Pick<
  OutboxEvent,
  'id' | 'eventType' | 'aggregateType' | 'aggregateId' | 'dedupeKey' | 'payload' | 'queueName' | 'messageGroupId' | 'attemptCount'
>;

/**
 * A row this dispatcher holds: by lease (`status = processing`, `lockedBy = holder`), or by the row lock of a
 * held batch (still `pending` in the database; holder and time are the claim's, kept in memory).
 */
export type ClaimedOutboxEvent = DispatchRow & { lockedBy: string; lockedAt: Date };

/**
 * Who claims, when, and until when. `holder` is unique per claim so a late settle can never touch a newer
 * claim. `leaseUntil` (now + the lock TTL) is stored in the row's `availableAt` while it is `processing`: the
 * time the row is presumed abandoned and released. So one `(status, availableAt)` index finds both due rows
 * and expired claims, and each claim or settle moves one index entry instead of two (bench:dispatch measured
 * ~25% less MariaDB CPU per row than with a second `(status, lockedAt)` index).
 */
export interface ClaimContext {
  holder: string;
  now: Date;
  leaseUntil: Date;
}

/** The columns of {@link DispatchRow}, for SELECT lists. */
export const DISPATCH_COLUMNS = 'id, eventType, aggregateType, aggregateId, dedupeKey, payload, queueName, messageGroupId, attemptCount';

/**
 * READ COMMITTED for the next transaction only (the pool's connections keep their default otherwise): outbox
 * writes filter on `status`, which the server may scan through the `(status, …)` indexes, and under the
 * default REPEATABLE READ those scans take gap locks that deadlocked concurrent dispatchers (seen in the
 * 4-dispatcher test). Under READ COMMITTED only matching rows stay locked.
 *
 * Through RDS Proxy: `SET TRANSACTION` at next-transaction scope is NOT among the variables the proxy tracks
 * (only `transaction_isolation` at session scope is), so on its own it would pin every session that claims
 * (AWS, "Avoiding pinning an RDS Proxy"). It does not pin only because the proxy's target group has the
 * `EXCLUDE_VARIABLE_SETS` session-pinning filter (infra/data-layer.ts; test/infra/database-settings.test.ts keeps it
 * while this statement exists). With that filter the proxy neither pins nor carries the setting to another
 * database connection, which is why it is always sent in the SAME query text as its START TRANSACTION (one
 * COM_QUERY): it then runs on the database connection of the transaction it is for, and is used up by it, so
 * nothing is left on a connection the proxy hands to another client. `SET SESSION transaction_isolation` would be
 * tracked, but would stay on the client session for every later transaction (to be reset each time, one more
 * state the proxy must match connections on) and is spelled `tx_isolation` on MariaDB 10.11.
 * docs/deploy.md, "RDS Proxy: what the application sends".
 */
export const BEGIN_READ_COMMITTED = 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION';

/**
 * The table as every statement that names its rows by an id list reads it (`UPDATE ${OUTBOX_BY_ID} … WHERE id
 * IN (…)`): through the primary key, always. On a small table (a fresh deploy, a test) the optimizer
 * otherwise scans the whole primary key once the list is about a sixth of the rows (EXPLAIN: 40 ids of 250 →
 * type `index`, 250 rows). A locking scan locks each row it reads until it finds the row is not in the list,
 * and a concurrent `FOR UPDATE SKIP LOCKED` claim skips a row so locked: the scheduled run then took the
 * short batch for the end of the backlog and left the row to the next run, a minute later (a CI failure of the
 * 3-batches-in-flight test; next to a loop of such scans, 387 of 6,679 claims missed a row, 0 of 6,860 with
 * the hint). Index hints on UPDATE and SELECT work alike on MySQL 8 and MariaDB;
 * test/outbox/outbox-plans.test.ts EXPLAINs every such statement as the dispatcher sent it.
 */
export const OUTBOX_BY_ID = 'OutboxEvent FORCE INDEX (PRIMARY)';

/**
 * The table as the scheduled claim reads it (./held-claim.ts): through the `(status, availableAt)` index, in its
 * order (its entries end with the primary key, so `ORDER BY availableAt, id` needs no sort). A locking read that
 * sorted instead would lock every due row it read before the LIMIT, not the batch alone, and concurrent
 * dispatchers' `SKIP LOCKED` claims would find nothing; with a large backlog the optimizer could judge a scan
 * and a sort cheaper. The hint works alike on MySQL 8 and MariaDB; test/db/query-plans.test.ts EXPLAINs the claim.
 */
export const OUTBOX_BY_DUE_TIME = 'OutboxEvent FORCE INDEX (OutboxEvent_status_availableAt_idx)';

/** `?, ?, ?` for a parameter list. */
export function placeholders(count: number): string {
  return count > 0 ? `${'?, '.repeat(count - 1)}?` : '';
}

/**
 * Claims one row by id for eager dispatch right after its creating transaction committed. Never waits on a
 * row lock: when the scheduled dispatcher has just locked the new row in a held batch (./held-claim.ts), the
 * claim skips it (`SKIP LOCKED`) and returns null at once — the batch sends it — instead of holding the
 * user's create request until the batch settles. Otherwise a compare-and-set and a read of the row by our
 * (unique) holder, committed. Returns null when the row is not due, locked, or already taken.
 */
export async function claimOutboxEventById(sql: SqlPool, id: string, claim: ClaimContext): Promise<ClaimedOutboxEvent | null> {
  const due = "id = ? AND status = 'pending' AND availableAt <= ?";
  return withSqlConnection(sql, async (conn) => {
    const [, , locked] = (await conn.query(
      `${BEGIN_READ_COMMITTED}; SELECT id FROM OutboxEvent WHERE ${due} FOR UPDATE SKIP LOCKED`, [id, claim.now],
    )) as [unknown, unknown, unknown[]];
    if (locked.length === 0) {
      await conn.query('ROLLBACK');
      return null;
    }
    const results = (await conn.query(
      `UPDATE OutboxEvent SET status = 'processing', lockedBy = ?, lockedAt = ?, availableAt = ?, updatedAt = ? WHERE ${due};
       SELECT ${DISPATCH_COLUMNS} FROM OutboxEvent WHERE id = ? AND status = 'processing' AND lockedBy = ?;
       COMMIT`,
      [claim.holder, claim.now, claim.leaseUntil, claim.now, id, claim.now, id, claim.holder],
    )) as unknown[];
    const [row] = results[1] as Record<string, unknown>[];
    return row ? { ...toDispatchRow(row), lockedBy: claim.holder, lockedAt: claim.now } : null;
  });
}

/**
 * Releases rows whose claim's lease ended by `now` (their dispatcher crashed or timed out between claim and
 * settle) back to `pending`, due again from the time they were claimed, which keeps them near their place in
 * line. Their attempt count is unchanged: nothing is known to have failed. A re-send after an unnoticed
 * success is harmless within the FIFO dedupe window (5 min), which is far longer than the lock TTL (60 s).
 *
 * Runs every cycle, so the common case (nothing expired) must take no locks: a plain read finds candidates,
 * and only those are released by primary key, re-checking the expiry (a compare-and-set). A locking scan of
 * the status index here deadlocked against dispatchers publishing fresh rows.
 * At most 400 ids per run keep the statement under the 16 KB at which RDS Proxy pins a session (an id is
 * 26 characters, ~30 bytes quoted); more are released by the next cycles.
 * @returns how many rows were released.
 */
export async function releaseExpiredOutboxLocks(sql: SqlPool, now: Date, limit = 400): Promise<number> {
  const expired = (await sql.query(
    "SELECT id FROM OutboxEvent WHERE status = 'processing' AND availableAt <= ? ORDER BY availableAt LIMIT ?",
    [now, limit],
  )) as { id: string }[];
  if (expired.length === 0) return 0;
  // `availableAt` is assigned before `lockedAt` is cleared: MySQL evaluates single-table SET items left to right.
  const results = await retryOnDeadlock(() => withSqlConnection(sql, async (conn) => (await conn.query(
    `${BEGIN_READ_COMMITTED};
     UPDATE ${OUTBOX_BY_ID} SET status = 'pending', availableAt = COALESCE(lockedAt, availableAt), lockedBy = NULL, lockedAt = NULL
     WHERE id IN (${placeholders(expired.length)}) AND status = 'processing' AND availableAt <= ?;
     COMMIT`,
    [...expired.map((r) => r.id), now],
  )) as unknown[]));
  return affectedRows(results[2]);
}

/** A row as the driver returns it → a typed dispatch row (`payload` is JSON text on MariaDB and MySQL alike). */
export function toDispatchRow(raw: Record<string, unknown>): DispatchRow {
  const payload = raw.payload;
  return {
    id: String(raw.id),
    eventType: String(raw.eventType),
    aggregateType: String(raw.aggregateType),
    aggregateId: String(raw.aggregateId),
    dedupeKey: String(raw.dedupeKey),
    payload: (typeof payload === 'string' ? parseJson(payload) : payload) as DispatchRow['payload'],
    queueName: raw.queueName == null ? null : String(raw.queueName),
    messageGroupId: raw.messageGroupId == null ? null : String(raw.messageGroupId),
    attemptCount: Number(raw.attemptCount),
  };
}

/** Parsed JSON, or the text itself when it is not JSON: the route's schema then refuses the row (fail closed). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
