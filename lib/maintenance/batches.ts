/**
 * Deletion in small batches with short locks: each batch picks up to `batchSize` primary keys with a plain
 * (non-locking) read of an index range, then deletes exactly those rows by primary key — re-checking the
 * condition — in its own short transaction, which locks only the rows it deletes (record locks on the primary
 * key), so the dispatcher and consumers working on other rows never wait on it for more than one short
 * statement. The server's default isolation: Prisma's per-transaction level is not proxy-safe
 * (../outbox/retried-transaction.ts).
 *
 * "By key" is enforced, not left to the optimizer ({@link deleteByKeys}): on a small table it scans instead,
 * and under REPEATABLE READ a scanning DELETE keeps every row and gap it read locked until the batch
 * commits. Measured on 300 outbox rows, a batch of 200 published ids: a job creation's outbox INSERT waited
 * out the lock timeout, and the dispatcher's `SKIP LOCKED` claim saw 0 of 50 pending rows. With the hint
 * both went through. One case stays: a batch whose keys cover most of a table through a secondary index (100
 * job ids of a 120-row table) is still read whole, hint or not; that takes a table of barely more rows than
 * one batch (500 by default).
 */
import type { PrismaDb, Prisma } from '../db/client.ts';
import { retriedTransaction } from '../outbox/retried-transaction.ts';

export interface BatchLoop {
  batchSize: number;
  /** No batch starts after this instant (epoch ms). */
  deadline: number;
}

/** `?, ?, …` for `n` values. */
export function marks(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/**
 * Repeats select → delete until a batch comes back short or the deadline passes; returns rows deleted.
 * `remove` runs inside the batch's transaction and returns how many rows it deleted.
 */
export async function deleteInBatches(
  db: PrismaDb, loop: BatchLoop,
  select: (limit: number) => Promise<string[]>,
  remove: (tx: Prisma.TransactionClient, ids: string[]) => Promise<number>,
): Promise<number> {
  let deleted = 0;
  while (Date.now() < loop.deadline) {
    const ids = await select(loop.batchSize);
    if (ids.length > 0) deleted += await retriedTransaction(db, (tx) => remove(tx, ids));
    if (ids.length < loop.batchSize) break;
  }
  return deleted;
}

/** Where {@link deleteByKeys} deletes: a table, the column its keys are in, and the index that leads with it. */
export interface KeyedTable {
  table: string;
  column: string;
  index: string;
}

/**
 * Deletes the rows of `target.table` whose `target.column` is in `keys` and that still match `and` (SQL on
 * the table's columns, with `values` for its placeholders), reached through `target.index` only. The
 * multi-table form of DELETE is the one that takes an index hint on MySQL 8 and MariaDB alike.
 * test/maintenance/retention-plans.test.ts EXPLAINs each such statement on a small table.
 * @returns rows deleted.
 */
export function deleteByKeys(
  tx: Prisma.TransactionClient, target: KeyedTable, keys: readonly string[], and = '', ...values: unknown[]
): Promise<number> {
  return tx.$executeRawUnsafe(
    `DELETE t FROM \`${target.table}\` t FORCE INDEX (\`${target.index}\`) WHERE t.\`${target.column}\` IN (${marks(keys.length)})${and ? ` AND ${and}` : ''}`,
    ...keys, ...values,
  );
}

/** The ids a query returned. */
export async function selectIds(db: PrismaDb, sql: string, ...values: unknown[]): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(sql, ...values);
  return rows.map((r) => r.id);
}
