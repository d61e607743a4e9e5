/** Direct access to the worker's test database for setup and assertions (never used by production code). */
import mysql from 'mysql2/promise';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';

let conn: mysql.Connection | undefined;
let tables: string[] | undefined;

/** A raw connection to this worker's database (for counting rows and injecting faults). */
export async function rawDb(): Promise<mysql.Connection> {
  if (!conn) {
    const s = parseDatabaseUrl(process.env.DATABASE_URL ?? '');
    conn = await mysql.createConnection({
      host: s.host, port: s.port, user: s.user, password: s.password, database: s.database,
      timezone: 'Z', multipleStatements: true,
    });
  }
  return conn;
}

/** Empties every table but the migration history. */
export async function truncateAll(): Promise<void> {
  const db = await rawDb();
  if (!tables) {
    const [rows] = await db.query<mysql.RowDataPacket[]>(
      "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'",
    );
    tables = rows.map((r) => String(r.t));
  }
  const statements = tables.map((t) => `DELETE FROM \`${t}\`;`).join(' ');
  // A test's own local runtime may still be writing (dispatcher, reaper, maintenance loops): a deadlock with
  // them rolls back only the failed DELETE, so the whole batch is simply run again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await db.query(`SET FOREIGN_KEY_CHECKS = 0; ${statements} SET FOREIGN_KEY_CHECKS = 1;`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'ER_LOCK_DEADLOCK' || attempt >= 5) throw err;
    }
  }
}

/**
 * Runs `fn` with InnoDB's automatic statistics recalculation off for `tables`, restored after: their
 * statistics stay as the per-test cleanup left them, as on tables filled faster than InnoDB recalculates (a
 * fresh deploy). For tests of the plans chosen on small tables.
 */
export async function withStaleStatistics<T>(tables: readonly string[], fn: () => Promise<T>): Promise<T> {
  const db = await rawDb();
  for (const t of tables) await db.query(`ALTER TABLE \`${t}\` STATS_AUTO_RECALC = 0`);
  try {
    return await fn();
  } finally {
    for (const t of tables) await db.query(`ALTER TABLE \`${t}\` STATS_AUTO_RECALC = DEFAULT`);
  }
}

/** Row count of a table, optionally filtered by a raw WHERE clause with parameters. */
export async function countRows(table: string, where = '1=1', params: unknown[] = []): Promise<number> {
  const [rows] = await (await rawDb()).query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${table}\` WHERE ${where}`, params);
  return Number(rows[0]?.n ?? 0);
}

export async function closeTruncator(): Promise<void> {
  await conn?.end();
  conn = undefined;
}
