/**
 * Prisma client setup: the only place that constructs a PrismaClient. Repositories receive a
 * `Db` (the client or a transaction client) so callers can group writes into one transaction.
 */
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import * as mariadb from 'mariadb';
import { PrismaClient } from './generated/client.ts';
import type { Prisma } from './generated/client.ts';
import { parseDatabaseUrl, poolOptions } from './database-url.ts';
import { closeAfterLargeStatements } from './large-statements.ts';
import { guardAdapterFactory } from './text-guard.ts';
import { sharedMember, type MemberInstance, type PoolHooks } from './credential-rotation.ts';
import { recoveringPrisma } from './recovering-handles.ts';
import { listen } from './sql-pool.ts';

export type { Prisma };
export type { AiJob, AiJobSnapshot, AiJobArtifact, AiJobTransition, OutboxEvent, AiUsageLog, UserModelCredential } from './generated/client.ts';
export type PrismaDb = InstanceType<typeof PrismaClient>;
/** A client or a transaction client: every repository function accepts either. */
export type Db = PrismaDb | Prisma.TransactionClient;

/** Creates a client on its own connection pool. Callers own it and must `$disconnect()` it. */
export function createPrismaClient(url: string): PrismaDb {
  return buildPrismaClient(url).instance;
}

/** A client and the count of its pool's open connections; `hooks` hear of the connections its pool opens. */
function buildPrismaClient(url: string, hooks?: PoolHooks): MemberInstance<PrismaDb> {
  const s = parseDatabaseUrl(url);
  // Text protocol: the adapter's default sends every query as a server-side prepared statement, which pins
  // the session to one database connection behind RDS Proxy (docs/deploy.md).
  // Guarded: a statement with ill-formed text throws IllFormedTextError instead of storing `?` (./text-guard.ts).
  // Multi-statement: the engine's own writes inside a Prisma transaction (a projection's artifacts, audit row and
  // event) go to the server in one round trip (executeTogether in ./sql.ts). Every statement uses placeholders.
  // Our pool, so that a connection that sent a statement over 16 KB is closed after it, ending RDS Proxy's pin
  // (./large-statements.ts); `prepareCacheLength: 0` is what the adapter sets on a pool of its own, and the
  // adapter ends the pool when the client disconnects.
  let created: mariadb.Pool | undefined;
  const pool = closeAfterLargeStatements(lazyPool(() => {
    created = mariadb.createPool({ ...poolOptions(s), multipleStatements: true, prepareCacheLength: 0 });
    if (hooks) listen(created, hooks);
    return created;
  }));
  const adapter = guardAdapterFactory(new PrismaMariaDb(pool, { database: s.database, useTextProtocol: true, disposeExternalPool: true }));
  // Generous waits: under concurrency a transaction may queue for a pooled connection; the defaults
  // (2 s wait, 5 s run) turn a busy moment into P2028 errors.
  const client = new PrismaClient({ adapter, transactionOptions: { maxWait: 10_000, timeout: 15_000 } });
  return {
    instance: client,
    connections: () => created?.totalConnections() ?? 0,
    // The pool first: the client's own disconnect waits for queries still queued for a connection.
    end: async () => {
      await created?.end().catch(() => undefined);
      await client.$disconnect().catch(() => undefined);
    },
  };
}

/**
 * A pool created at its first use, as the adapter creates a pool of its own at its first query: a client that
 * is never used opens no connection. Every method is forwarded to the pool (created on the first call, not on
 * the first lookup: the adapter looks `getConnection` up to tell a pool from settings); `end` before any use is
 * a no-op.
 */
function lazyPool(create: () => mariadb.Pool): mariadb.Pool {
  let pool: mariadb.Pool | undefined;
  return new Proxy({} as mariadb.Pool, {
    get(_, prop) {
      if (prop === 'then') return undefined; // not a thenable: `await` must not call into the pool
      if (prop === 'end' && !pool) return async () => undefined;
      return (...args: unknown[]) => {
        pool ??= create();
        return (Reflect.get(pool, prop, pool) as (...a: unknown[]) => unknown).apply(pool, args);
      };
    },
  });
}

const shared = sharedMember<PrismaDb>({ create: buildPrismaClient });
let handle: PrismaDb | undefined;

/**
 * The process-wide client (one per Lambda container), created on first use from DATABASE_URL: a stable handle
 * over the current generation's client, whose calls survive a rotation of the database secret
 * (./credential-rotation.ts).
 */
export function getPrisma(): PrismaDb {
  handle ??= recoveringPrisma(shared);
  return handle;
}

/** Closes the process-wide client (tests, local runtime shutdown); the next use opens another. */
export async function closePrisma(): Promise<void> {
  await shared.close();
}

/**
 * Runs `fn` in a transaction: joins the caller's transaction when `db` already is one, otherwise opens one.
 * Lets repository functions take an optional transaction (ADR-003 §1.4 `markSucceeded(jobId, tx?)`).
 */
export async function inTransaction<T>(db: Db, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  if ('$transaction' in db) return db.$transaction(fn);
  return fn(db);
}
