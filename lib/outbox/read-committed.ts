import type { Db, Prisma } from '../db/client.ts';
import { retryOnDeadlock } from '../db/sql-pool.ts';

/** Prisma's code for "transaction failed due to a write conflict or a deadlock". */
const WRITE_CONFLICT = 'P2034';

/**
 * Runs `fn` in a READ COMMITTED transaction, retried (whole) when the database picks it as a deadlock
 * victim; inside the caller's transaction when `db` already is one (the caller then owns retries).
 *
 * Why READ COMMITTED: outbox writes filter on `status`, which MariaDB/MySQL may scan through the
 * `(status, …)` indexes. Under the default REPEATABLE READ those scans take next-key (gap) locks, and
 * concurrent dispatchers claiming and publishing neighbouring rows deadlock (seen in the 4-dispatcher test).
 * Under READ COMMITTED only matching rows stay locked, and an UPDATE skips rows another transaction holds
 * when their committed version does not match (semi-consistent read). Every `fn` here is a set of
 * compare-and-set statements, so running it again after a rollback is safe.
 */
export async function readCommitted<T>(db: Db, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  if (!('$transaction' in db)) return fn(db);
  return retryOnDeadlock(
    () => db.$transaction(fn, { isolationLevel: 'ReadCommitted' }),
    (err) => (err as { code?: unknown } | undefined)?.code === WRITE_CONFLICT,
  );
}
