/**
 * A raw driver pool for hot paths where Prisma's per-query cost dominates (bench/create.ts measured an
 * interactive Prisma transaction of four inserts at ~0.3× a raw driver transaction). It uses the `mariadb`
 * driver that Prisma's adapter already ships, so Lambda bundles carry one MySQL driver, not two. Same
 * DATABASE_URL, its own small pool. The process-wide pool ({@link getSqlPool}) is rebuilt when the database
 * secret rotates (./credential-rotation.ts).
 */
import * as mariadb from 'mariadb';
import { parseDatabaseUrl, poolOptions } from './database-url.ts';
import type { SqlStatement } from './sql.ts';
import { closeAfterLargeStatements } from './large-statements.ts';
import { guardSqlPool } from './text-guard.ts';
import { sharedMember, type PoolHooks } from './credential-rotation.ts';
import { recoveringHandle } from './recovering-handles.ts';

/** The raw driver pool type (hot-path repositories take one). */
export type SqlPool = mariadb.Pool;

/** What runs a statement: the pool, or one of its connections (inside a transaction it holds). */
export type SqlRunner = Pick<SqlPool, 'query'>;

/**
 * A new raw pool for a DATABASE_URL: text protocol only (`query`, never `execute`: no server-side prepared
 * statements), multi-statement so a transaction is one round trip, and the shared pool sizing of
 * {@link poolOptions}. `hooks` hear of the connections it opens and fails to open.
 */
export function createSqlPool(databaseUrl: string, hooks?: PoolHooks): SqlPool {
  const pool = mariadb.createPool({
    ...poolOptions(parseDatabaseUrl(databaseUrl)), multipleStatements: true, insertIdAsNumber: true, bigIntAsNumber: true,
  });
  if (hooks) listen(pool, hooks);
  // Guarded: ill-formed text throws IllFormedTextError instead of being stored as `?` (./text-guard.ts).
  // A connection that sent a statement over 16 KB is closed after it, ending RDS Proxy's pin (./large-statements.ts).
  return guardSqlPool(closeAfterLargeStatements(pool));
}

/** Passes a mariadb pool's connection events to `hooks` (`error`: a connection could not be opened). */
export function listen(pool: mariadb.Pool, hooks: PoolHooks): void {
  const events = pool as unknown as { on(event: string, listener: (arg: unknown) => void): unknown };
  events.on('error', (err) => hooks.onConnectionError(err));
  events.on('connection', () => hooks.onConnected());
}

const shared = sharedMember<SqlPool>({
  create: (url, hooks) => {
    const pool = createSqlPool(url, hooks);
    return { instance: pool, connections: () => pool.totalConnections(), end: () => pool.end() };
  },
});

let handle: SqlPool | undefined;

/**
 * The process-wide raw pool for DATABASE_URL, created on first use: a stable handle over the current
 * generation's pool, whose calls survive a rotation of the database secret (./credential-rotation.ts).
 */
export function getSqlPool(): SqlPool {
  handle ??= recoveringHandle(shared, ['query', 'getConnection', 'batch', 'execute']);
  return handle;
}

export async function closeSqlPool(): Promise<void> {
  await shared.close();
}

/** A driver error from MySQL/MariaDB, e.g. `ER_DUP_ENTRY`. */
export interface SqlDriverError extends Error {
  code?: string;
  errno?: number;
  sqlMessage?: string;
}

/**
 * Runs the statements as ONE transaction in ONE round trip (`START TRANSACTION; …; COMMIT`) and returns each
 * statement's result (a result header or rows). The server stops at the first failing statement; we then
 * roll back on the same connection before it returns to the pool, so either every statement commits or none does.
 */
export async function runAtomically(statements: SqlStatement[], db: SqlPool = getSqlPool()): Promise<unknown[]> {
  const { sql, values } = atomicQuery(statements);
  // Text protocol: the driver substitutes the `?` placeholders client-side, escaped, across all statements.
  const results = await withSqlConnection(db, async (conn) => (await conn.query(sql, values)) as unknown[]);
  return results.slice(1, -1);
}

/** The one query {@link runAtomically} sends for `statements`: its text (with `?` placeholders) and values. */
export function atomicQuery(statements: readonly SqlStatement[]): { sql: string; values: SqlStatement['values'] } {
  return {
    sql: ['START TRANSACTION', ...statements.map((s) => s.sql), 'COMMIT'].join(';\n'),
    values: statements.flatMap((s) => s.values),
  };
}

/** True when `err` is a duplicate-key error on `indexName` (MySQL 8 prefixes the table: `AiJob.<index>`). */
export function isDuplicateKey(err: unknown, indexName: string): boolean {
  const e = err as SqlDriverError | undefined;
  if (e?.code !== 'ER_DUP_ENTRY') return false;
  // mysql2 gives the key name only inside the server's message: "Duplicate entry '…' for key '<table>.<index>'".
  const match = /for key '(?:[^'.]+\.)?([^']+)'/.exec(e.sqlMessage ?? e.message);
  return match?.[1] === indexName;
}

/**
 * Runs `fn` on one pooled connection, for work that needs several round trips on the same session (a
 * transaction). If `fn` throws, the connection is rolled back (harmless outside a transaction) before it goes
 * back to the pool, and destroyed when even that fails, so no half-done transaction is ever handed on.
 */
export async function withSqlConnection<T>(db: SqlPool, fn: (conn: mariadb.PoolConnection) => Promise<T>): Promise<T> {
  const conn = await db.getConnection();
  let result: T;
  try {
    result = await fn(conn);
  } catch (err) {
    await rollbackAndRelease(conn);
    throw err;
  }
  await conn.release();
  return result;
}

/**
 * Ends whatever transaction `conn` has open (rollback, plus `reset` statements such as restoring a session
 * variable) and returns it to the pool; destroys it instead when that fails, which makes the server roll
 * back. Never throws.
 */
export async function rollbackAndRelease(conn: mariadb.PoolConnection, reset = ''): Promise<void> {
  try {
    await conn.query(reset ? `ROLLBACK; ${reset}` : 'ROLLBACK');
    await conn.release();
  } catch {
    await conn.destroy();
  }
}

/** MySQL/MariaDB: "Deadlock found when trying to get lock; try restarting transaction". */
const ER_LOCK_DEADLOCK = 1213;

/** The raw driver's deadlock error. */
function isDriverDeadlock(err: unknown): boolean {
  return (err as SqlDriverError | undefined)?.errno === ER_LOCK_DEADLOCK;
}

/**
 * Runs `fn` again (whole) when the server chose its transaction as a deadlock victim, up to `tries` times.
 * Only for transactions made of compare-and-set statements, which are safe to repeat after a rollback.
 * `isDeadlock` recognises the victim's error (the raw driver's by default; Prisma wraps it differently).
 */
export async function retryOnDeadlock<T>(
  fn: () => Promise<T>, isDeadlock: (err: unknown) => boolean = isDriverDeadlock, tries = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= tries || !isDeadlock(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}

/** `affectedRows` of a write's result header. */
export function affectedRows(result: unknown): number {
  return Number((result as { affectedRows?: number } | undefined)?.affectedRows ?? 0);
}
