/**
 * A raw driver pool for hot paths where Prisma's per-query cost dominates (bench/create.ts measured an
 * interactive Prisma transaction of four inserts at ~0.3× a raw driver transaction). It uses the `mariadb`
 * driver that Prisma's adapter already ships, so Lambda bundles carry one MySQL driver, not two. Same
 * DATABASE_URL, its own small pool.
 */
import * as mariadb from 'mariadb';
import { databaseUrlFromEnv, parseDatabaseUrl, tlsOptions } from './database-url.ts';
import type { SqlStatement } from './sql.ts';

let pool: mariadb.Pool | undefined;

export function getSqlPool(): mariadb.Pool {
  if (!pool) {
    const s = parseDatabaseUrl(databaseUrlFromEnv());
    pool = mariadb.createPool({
      host: s.host, port: s.port, user: s.user, password: s.password, database: s.database,
      connectionLimit: s.connectionLimit, acquireTimeout: s.poolTimeoutMs, timezone: 'Z', multipleStatements: true,
      allowPublicKeyRetrieval: s.allowPublicKeyRetrieval, insertIdAsNumber: true, bigIntAsNumber: true, ...tlsOptions(s),
    });
  }
  return pool;
}

export async function closeSqlPool(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.end();
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
export async function runAtomically(statements: SqlStatement[], db: mariadb.Pool = getSqlPool()): Promise<unknown[]> {
  const sql = ['START TRANSACTION', ...statements.map((s) => s.sql), 'COMMIT'].join(';\n');
  const values = statements.flatMap((s) => s.values);
  const conn = await db.getConnection();
  let reusable = true;
  try {
    // Text protocol: the driver substitutes the `?` placeholders client-side, escaped, across all statements.
    const results = (await conn.query(sql, values)) as unknown[];
    return results.slice(1, -1);
  } catch (err) {
    await conn.query('ROLLBACK').catch(() => {
      reusable = false;
    });
    throw err;
  } finally {
    if (reusable) await conn.release();
    else await conn.destroy();
  }
}

/** True when `err` is a duplicate-key error on `indexName` (MySQL 8 prefixes the table: `AiJob.<index>`). */
export function isDuplicateKey(err: unknown, indexName: string): boolean {
  const e = err as SqlDriverError | undefined;
  if (e?.code !== 'ER_DUP_ENTRY') return false;
  // mysql2 gives the key name only inside the server's message: "Duplicate entry '…' for key '<table>.<index>'".
  const match = /for key '(?:[^'.]+\.)?([^']+)'/.exec(e.sqlMessage ?? e.message);
  return match?.[1] === indexName;
}
