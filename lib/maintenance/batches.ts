/**
 * Deletion in small batches with short locks: each batch picks up to `batchSize` primary keys with a plain
 * (non-locking) read of an index range, then deletes exactly those rows by primary key — re-checking the
 * condition — in its own short transaction, which locks only the rows it deletes (record locks on the primary
 * key), so the dispatcher and consumers working on other rows never wait on it for more than one short
 * statement. The server's default isolation: Prisma's per-transaction level is not proxy-safe
 * (../outbox/retried-transaction.ts).
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

/** The ids a query returned. */
export async function selectIds(db: PrismaDb, sql: string, ...values: unknown[]): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(sql, ...values);
  return rows.map((r) => r.id);
}
