import type { Db, Prisma } from '../db/client.ts';
import { retryOnDeadlock } from '../db/sql-pool.ts';

/** Prisma's code for "transaction failed due to a write conflict or a deadlock". */
const WRITE_CONFLICT = 'P2034';

/**
 * Runs `fn` in a transaction at the server's default isolation, retried (whole) when the database picks it
 * as a deadlock victim; inside the caller's transaction when `db` already is one (the caller then owns retries).
 *
 * Why not Prisma's `isolationLevel: 'ReadCommitted'`: the adapter sends `SET TRANSACTION ISOLATION LEVEL …`
 * and `BEGIN` as two queries, and through RDS Proxy the second may run on another database connection, so
 * the level would silently not apply (docs/deploy.md, "RDS Proxy: what the application sends"). The paths
 * that need READ COMMITTED — those whose writes scan the `(status, …)` indexes, where REPEATABLE READ's
 * gap locks deadlocked concurrent dispatchers — run on the raw driver with the SET and START TRANSACTION in
 * one COM_QUERY (`BEGIN_READ_COMMITTED` in ./outbox-claims.ts). Every `fn` here finds its rows by primary key (record locks
 * only, at either level) and is a set of compare-and-set statements, so running it again after a rollback is safe.
 */
export async function retriedTransaction<T>(db: Db, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  if (!('$transaction' in db)) return fn(db);
  return retryOnDeadlock(
    () => db.$transaction(fn),
    (err) => (err as { code?: unknown } | undefined)?.code === WRITE_CONFLICT,
  );
}
