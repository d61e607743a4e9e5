/**
 * The scheduled dispatcher's claim: a batch of due rows locked with `SELECT … FOR UPDATE SKIP LOCKED` in a
 * transaction that stays open while the batch is sent, and settles it in the same transaction. The row lock
 * IS the claim: a concurrent dispatcher's scan skips locked rows, so it never sends them, and only the
 * holder of the transaction can settle them.
 *
 * Why hold the lock rather than mark the rows `processing` and commit (the lease claim of eager dispatch,
 * ./outbox-claims.ts): a published row is then written once instead of twice. `npm run bench:dispatch-db`
 * (callgrind on MariaDB 10.11: one dispatcher, 5,000 rows, purge included) counts ~0.27 M server
 * instructions per published row this way against ~0.41 M with a committed lease: the lease's extra write
 * and index move were over a third of the database's work.
 *
 * Crash safety without a lease in the row: if the dispatcher dies, its connection closes and the server
 * rolls the claim back — the rows are due again at once, untouched. If it vanishes without closing the
 * connection (network partition, frozen host), the session's `wait_timeout` is the lock TTL: the server
 * drops a session idle that long and rolls back. A send still running then cannot be settled (the commit
 * fails), and its messages are sent again by the next claim; FIFO deduplication (5 min) makes that harmless.
 * The send budget must therefore stay below the TTL (checked in createDispatcherDeps).
 *
 * Rows that must be given up are handed off inside the settle: marked `processing` with this claim's holder
 * and lease, committed, then given up through Prisma (./outbox-settlement.ts), whose transaction must not
 * wait on our own lock. A crash between the two leaves them to the lease's expiry release.
 */
import type * as mariadb from 'mariadb';
import { packStatements, splitByList } from '../db/large-statements.ts';
import { affectedRows, retryOnDeadlock, rollbackAndRelease, type SqlPool } from '../db/sql-pool.ts';
import {
  BEGIN_READ_COMMITTED, DISPATCH_COLUMNS, OUTBOX_BY_DUE_TIME, OUTBOX_BY_ID, placeholders, toDispatchRow, type ClaimContext, type ClaimedOutboxEvent,
} from './outbox-claims.ts';

/** A claimed batch: its rows, locked by the open transaction on `connection`. */
export interface HeldOutboxBatch {
  claim: ClaimContext;
  rows: ClaimedOutboxEvent[];
  /** The connection whose transaction holds the row locks; null once settled or abandoned. */
  connection: mariadb.PoolConnection | null;
}

/** How a held batch's rows end its transaction. Rows in no list are left `pending` as they were. */
export interface HeldSettlement {
  published: readonly string[];
  /** Failed sends: one more attempt counted, due again at `availableAt`. */
  retries: readonly { ids: readonly string[]; availableAt: Date; error: string }[];
  /** Rows to give up: committed as `processing` under the claim's holder and lease, for the give-up path. */
  handOff: readonly string[];
}

/**
 * Gives a claim's connection back its usual idle timeout (the claim shortened it to the lock TTL).
 *
 * `SET SESSION wait_timeout` is on the SET allow-list (docs/deploy.md, "RDS Proxy: what the application
 * sends") for this one path, deliberately: it is the lock TTL that ends a vanished dispatcher's claim, and
 * it only ever changes a session inside the claim's own round trips (set with START TRANSACTION, reset with
 * COMMIT/ROLLBACK). Were the proxy to pin for it, that would bind at most the dispatcher's 3 connections,
 * which a held claim keeps for the whole transaction anyway.
 */
const RESET_WAIT_TIMEOUT = 'SET SESSION wait_timeout = DEFAULT';

/** `lastError` column width. */
const LAST_ERROR_MAX = 1024;

/**
 * The claim's locking read: up to `?` (the limit) rows due by `?` (now), oldest first, through the due-time index
 * (`OUTBOX_BY_DUE_TIME`), skipping rows another claim holds.
 */
export const CLAIM_DUE_ROWS = `SELECT ${DISPATCH_COLUMNS} FROM ${OUTBOX_BY_DUE_TIME}
         WHERE status = 'pending' AND availableAt <= ?
         ORDER BY availableAt, id LIMIT ? FOR UPDATE SKIP LOCKED`;

/**
 * Locks up to `limit` due rows (`pending`, `availableAt <= now`), oldest first, in a READ COMMITTED
 * transaction (see `BEGIN_READ_COMMITTED`, sent in the same query text) whose session is dropped by the server after `lockTtlMs` idle.
 * One round trip. With no due rows the transaction is committed at once and `connection` is null.
 */
export async function claimDueOutboxBatch(sql: SqlPool, claim: ClaimContext, limit: number, lockTtlMs: number): Promise<HeldOutboxBatch> {
  // SKIP LOCKED never waits on a row, so a deadlock here is not expected; if the server ever picks this
  // transaction as a victim anyway, it has written nothing, and claiming again is safe.
  const { connection, rows } = await retryOnDeadlock(async () => {
    const conn = await sql.getConnection();
    try {
      const results = (await conn.query(
        `SET SESSION wait_timeout = ?; ${BEGIN_READ_COMMITTED}; ${CLAIM_DUE_ROWS}`,
        [Math.max(1, Math.ceil(lockTtlMs / 1000)), claim.now, limit],
      )) as unknown[];
      const claimed = (results[3] as Record<string, unknown>[]).map((raw) => ({ ...toDispatchRow(raw), lockedBy: claim.holder, lockedAt: claim.now }));
      return { connection: conn, rows: claimed };
    } catch (err) {
      await rollbackAndRelease(conn, RESET_WAIT_TIMEOUT);
      throw err;
    }
  });
  const batch: HeldOutboxBatch = { claim, connection, rows };
  if (rows.length === 0) await settleHeldBatch(batch, { published: [], retries: [], handOff: [] });
  return batch;
}

/** One write of a settle: its statement, and which count its affected rows add to (none for the final COMMIT and reset). */
interface SettleStatement {
  sql: string;
  values: unknown[];
  counts?: 'published' | 'retried' | 'handedOff';
}

/** The settle's writes by id list, each split so that its text as sent stays under the proxy's 16 KB. */
function settleStatements(batch: HeldOutboxBatch, settlement: HeldSettlement, now: Date): SettleStatement[] {
  const { holder, leaseUntil } = batch.claim;
  const lockedAt = batch.claim.now;
  const byIds = (ids: readonly string[], build: (chunk: readonly string[]) => SettleStatement) => (ids.length > 0 ? splitByList(ids, build) : []);
  return [
    ...byIds(settlement.published, (ids) => ({
      sql: `UPDATE ${OUTBOX_BY_ID} SET status = 'published', publishedAt = ?, lockedBy = ?, lockedAt = ?, lastError = NULL, updatedAt = ?
            WHERE id IN (${placeholders(ids.length)}) AND status = 'pending'`,
      values: [now, holder, lockedAt, now, ...ids], counts: 'published',
    })),
    ...settlement.retries.flatMap((retry) => byIds(retry.ids, (ids) => ({
      sql: `UPDATE ${OUTBOX_BY_ID} SET attemptCount = attemptCount + 1, availableAt = ?, lastError = ?, updatedAt = ?
            WHERE id IN (${placeholders(ids.length)}) AND status = 'pending'`,
      values: [retry.availableAt, retry.error.slice(0, LAST_ERROR_MAX), now, ...ids], counts: 'retried',
    }))),
    ...byIds(settlement.handOff, (ids) => ({
      sql: `UPDATE ${OUTBOX_BY_ID} SET status = 'processing', lockedBy = ?, lockedAt = ?, availableAt = ?, updatedAt = ?
            WHERE id IN (${placeholders(ids.length)}) AND status = 'pending'`,
      values: [holder, lockedAt, leaseUntil, now, ...ids], counts: 'handedOff',
    })),
    // Together, in the last query: the session gets its usual idle timeout back in the round trip that commits.
    { sql: `COMMIT;\n${RESET_WAIT_TIMEOUT}`, values: [] },
  ];
}

/**
 * Writes the batch's outcome and commits, then returns the connection to the pool. One round trip when the whole
 * settle's text is within the 16 KB at which RDS Proxy pins a session (a batch of published rows: 500 ids are about
 * 15 KB); a settle with error texts (up to 1,024 characters each, 3 bytes a character in Chinese or Japanese) is
 * sent as several queries of at most 16 KB each, in the same transaction, the COMMIT in the last.
 * Published rows keep the claim's holder and time as the record of who sent them.
 * @returns how many rows each list changed.
 * @throws the driver's error when the database fails; the transaction is then rolled back (every row
 *   `pending` as before, sent ones to be sent again and deduplicated) and the connection discarded.
 */
export async function settleHeldBatch(
  batch: HeldOutboxBatch, settlement: HeldSettlement, now: Date = new Date(),
): Promise<{ published: number; retried: number; handedOff: number }> {
  const connection = batch.connection;
  if (!connection) throw new Error('outbox batch already settled or abandoned');
  batch.connection = null;
  const counts = { published: 0, retried: 0, handedOff: 0 };
  try {
    for (const query of packStatements(settleStatements(batch, settlement, now))) {
      const results = (await connection.query(query.map((s) => s.sql).join(';\n'), query.flatMap((s) => s.values))) as unknown[];
      // One statement answers with its result alone; several with one result each (the final COMMIT and reset last).
      const each = query.length === 1 ? [results] : results;
      query.forEach((statement, i) => {
        if (statement.counts) counts[statement.counts] += affectedRows(each[i]);
      });
    }
  } catch (err) {
    await rollbackAndRelease(connection, RESET_WAIT_TIMEOUT);
    throw err;
  }
  await connection.release();
  return counts;
}

/**
 * Gives the batch back untouched (rollback) when it cannot be settled; the rows are due again at once.
 * Never throws: a connection that cannot even roll back is destroyed, which rolls back on the server.
 */
export async function abandonHeldBatch(batch: HeldOutboxBatch): Promise<void> {
  const connection = batch.connection;
  batch.connection = null;
  if (connection) await rollbackAndRelease(connection, RESET_WAIT_TIMEOUT);
}
