/**
 * The raw mysql2 pool for hot paths where Prisma's per-query cost dominates (bench/create.ts measured an
 * interactive Prisma transaction of four inserts at ~0.3× a raw driver transaction). Same DATABASE_URL,
 * its own small pool.
 */
import mysql from 'mysql2/promise';
import { databaseUrlFromEnv, parseDatabaseUrl, tlsOptions } from './database-url.ts';
import type { SqlStatement } from './sql.ts';

let pool: mysql.Pool | undefined;

export function getSqlPool(): mysql.Pool {
  if (!pool) {
    const s = parseDatabaseUrl(databaseUrlFromEnv());
    pool = mysql.createPool({
      host: s.host, port: s.port, user: s.user, password: s.password, database: s.database,
      connectionLimit: s.connectionLimit, timezone: 'Z', multipleStatements: true, charset: 'utf8mb4', ...tlsOptions(s),
    });
  }
  return pool;
}

export async function closeSqlPool(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.end();
}

/** A driver error from MySQL/MariaDB (mysql2), e.g. `ER_DUP_ENTRY`. */
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
export async function runAtomically(statements: SqlStatement[], db: mysql.Pool = getSqlPool()): Promise<unknown[]> {
  const script = ['START TRANSACTION', ...statements.map((s) => mysql.format(s.sql, s.values)), 'COMMIT'].join(';\n');
  const conn = await db.getConnection();
  let reusable = true;
  try {
    const [results] = await conn.query(script);
    return (results as unknown[]).slice(1, -1);
  } catch (err) {
    await conn.query('ROLLBACK').catch(() => {
      reusable = false;
    });
    throw err;
  } finally {
    if (reusable) conn.release();
    else conn.destroy();
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
