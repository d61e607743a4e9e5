/**
 * Offline migration runner. Applies `prisma/migrations/<timestamp>_<name>/migration.sql` in name order
 * and records each in `_prisma_migrations` with the same table layout, checksum (SHA-256 hex of the file)
 * and bookkeeping that `prisma migrate deploy` uses, so Prisma's own engine can take over wherever it
 * can be downloaded. Safe to run concurrently (a named server lock serialises runners) and repeatedly
 * (applied migrations are skipped).
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl, tlsOptions } from './database-url.ts';

/** `MIGRATIONS_DIR` when set (a bundled Lambda ships the folder beside its code), else the repository's. */
export const DEFAULT_MIGRATIONS_DIR = process.env.MIGRATIONS_DIR?.trim() || fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

const MIGRATIONS_TABLE_DDL = `CREATE TABLE IF NOT EXISTS \`_prisma_migrations\` (
    \`id\` VARCHAR(36) PRIMARY KEY NOT NULL,
    \`checksum\` VARCHAR(64) NOT NULL,
    \`finished_at\` DATETIME(3),
    \`migration_name\` VARCHAR(255) NOT NULL,
    \`logs\` TEXT,
    \`rolled_back_at\` DATETIME(3),
    \`started_at\` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    \`applied_steps_count\` INTEGER UNSIGNED NOT NULL DEFAULT 0
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`;

const LOCK_TIMEOUT_S = 120;

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationResult {
  database: string;
  created: boolean;
  applied: string[];
  alreadyApplied: string[];
}

export function migrationChecksum(sql: string): string {
  return createHash('sha256').update(sql, 'utf8').digest('hex');
}

/** Reads the migration folders in the order Prisma applies them (lexicographic by folder name). */
export async function readMigrations(dir = DEFAULT_MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const lock = await readFile(path.join(dir, 'migration_lock.toml'), 'utf8').catch(() => '');
  if (lock && !/provider\s*=\s*"mysql"/.test(lock)) {
    throw new MigrationError('migration_lock.toml does not name provider "mysql"');
  }
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: migrationChecksum(sql) };
    }),
  );
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/**
 * Creates the database named in `url` if missing, then applies pending migrations.
 * Throws MigrationError on a failed earlier migration, an edited applied migration, or a failing script
 * (the failure is recorded in `_prisma_migrations.logs`, as Prisma does).
 */
export async function migrateDatabase(url: string, dir = DEFAULT_MIGRATIONS_DIR): Promise<MigrationResult> {
  const s = parseDatabaseUrl(url);
  if (!s.database) throw new MigrationError('DATABASE_URL names no database (expected mysql://…/<database>)');
  const migrations = await readMigrations(dir);
  const conn = await mysql.createConnection({
    host: s.host, port: s.port, user: s.user, password: s.password, multipleStatements: true, timezone: 'Z', ...tlsOptions(s),
  });
  try {
    const [created] = await conn.query<mysql.ResultSetHeader>(
      `CREATE DATABASE IF NOT EXISTS \`${s.database.replaceAll('`', '``')}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
    await conn.changeUser({ database: s.database });
    const lockName = `migrate:${s.database}`.slice(0, 64);
    const [[lock]] = await conn.query<mysql.RowDataPacket[]>('SELECT GET_LOCK(?, ?) AS ok', [lockName, LOCK_TIMEOUT_S]);
    if (lock?.ok !== 1) throw new MigrationError(`could not take the migration lock within ${LOCK_TIMEOUT_S}s`);
    try {
      const outcome = await applyPending(conn, migrations);
      return { database: s.database, created: created.warningStatus === 0, ...outcome };
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [lockName]);
    }
  } finally {
    await conn.end();
  }
}

async function applyPending(conn: mysql.Connection, migrations: MigrationFile[]) {
  await conn.query(MIGRATIONS_TABLE_DDL);
  const [rows] = await conn.query<(AppliedRow & mysql.RowDataPacket)[]>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at FROM `_prisma_migrations` ORDER BY started_at',
  );
  const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed) {
    throw new MigrationError(
      `migration ${failed.migration_name} failed earlier; fix the database, then mark it rolled back (prisma migrate resolve --rolled-back ${failed.migration_name}) before applying again`,
    );
  }
  const done = new Map(rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => [r.migration_name, r]));
  const applied: string[] = [];
  const alreadyApplied: string[] = [];
  for (const m of migrations) {
    const row = done.get(m.name);
    if (row) {
      if (row.checksum !== m.checksum) {
        throw new MigrationError(`migration ${m.name} was edited after it was applied (checksum differs); add a new migration instead`);
      }
      alreadyApplied.push(m.name);
      continue;
    }
    await applyOne(conn, m);
    applied.push(m.name);
  }
  return { applied, alreadyApplied };
}

async function applyOne(conn: mysql.Connection, m: MigrationFile): Promise<void> {
  const id = randomUUID();
  await conn.query(
    'INSERT INTO `_prisma_migrations` (id, checksum, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, CURRENT_TIMESTAMP(3), 0)',
    [id, m.checksum, m.name],
  );
  try {
    await conn.query(m.sql);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await conn.query('UPDATE `_prisma_migrations` SET logs = ? WHERE id = ?', [message, id]);
    throw new MigrationError(`migration ${m.name} failed: ${message}`, { cause: err });
  }
  await conn.query(
    'UPDATE `_prisma_migrations` SET finished_at = CURRENT_TIMESTAMP(3), applied_steps_count = 1 WHERE id = ?',
    [id],
  );
}
