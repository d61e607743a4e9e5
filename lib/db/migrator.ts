/**
 * Offline migration runner. Applies `prisma/migrations/<timestamp>_<name>/migration.sql` in name order
 * and records each in `_prisma_migrations` with the same table layout, checksum (SHA-256 hex of the file)
 * and bookkeeping that `prisma migrate deploy` uses, so Prisma's own engine can take over wherever it
 * can be downloaded. Safe to run concurrently (a named server lock serialises runners) and repeatedly
 * (applied migrations are skipped).
 *
 * At deploy time it runs through RDS Proxy (docs/deploy.md, "RDS Proxy: what the application sends"): it
 * never sends COM_CHANGE_USER (the database is chosen in the handshake of a second connection), it takes
 * its named lock knowing that pins its one session (deliberately: deploy time only), and, when asked (the
 * deploy-time Lambda does), it keeps trying a database it cannot reach yet for {@link CONNECT_RETRY_MS},
 * since a fresh cluster or proxy may still be starting.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { retryWhileUnavailable, type ConnectRetryOptions } from './connect-retry.ts';
import { parseDatabaseUrl, tlsOptions, type DatabaseSettings } from './database-url.ts';

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

export { CONNECT_RETRY_MS } from './connect-retry.ts';

/** How the migrator treats a database it cannot reach yet (./connect-retry.ts). */
export type MigrateOptions = ConnectRetryOptions;

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
  /**
   * A failed migration newer than every one this runner ships: the schema is ahead of this code. Set when an
   * older release runs during a deploy's rollback (see {@link migrateDatabase}); nothing was applied.
   */
  failedAhead?: string;
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
 * (the failure is recorded in `_prisma_migrations.logs`, as Prisma does). One exception: a failed migration
 * newer than all of this runner's, when all of its own are applied, is reported as `failedAhead` instead: that
 * is an older release run by the rollback of the deploy whose migration failed (docs/deploy.md).
 */
export async function migrateDatabase(url: string, dir = DEFAULT_MIGRATIONS_DIR, options: MigrateOptions = {}): Promise<MigrationResult> {
  const s = parseDatabaseUrl(url);
  if (!s.database) throw new MigrationError('DATABASE_URL names no database (expected mysql://…/<database>)');
  const migrations = await readMigrations(dir);
  const created = await createDatabaseIfMissing(s, options);
  // A second connection names the database in its handshake: `changeUser` would send COM_CHANGE_USER.
  const conn = await connectWithRetry(s, s.database, options);
  const lockName = `migrate:${s.database}`.slice(0, 64);
  let outcome: Awaited<ReturnType<typeof applyPending>> | undefined;
  let failure: unknown;
  try {
    const [[lock]] = await conn.query<mysql.RowDataPacket[]>('SELECT GET_LOCK(?, ?) AS ok', [lockName, LOCK_TIMEOUT_S]);
    if (lock?.ok !== 1) throw new MigrationError(`could not take the migration lock within ${LOCK_TIMEOUT_S}s`);
    try {
      outcome = await applyPending(conn, migrations);
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [lockName]).catch((err: unknown) => { failure ??= err; });
    }
  } catch (err) {
    failure = err;
  }
  // The migration's own error first: a cleanup that fails after it (the connection it broke) must not hide it.
  await conn.end().catch((err: unknown) => { failure ??= err; });
  // Every migration recorded as applied: a failed RELEASE_LOCK or close is no reason to fail the deploy (the
  // server drops a named lock with its session).
  if (outcome) return { database: s.database, created, ...outcome };
  throw failure;
}

/** `CREATE DATABASE IF NOT EXISTS` on a connection to no database; true when it created it. */
async function createDatabaseIfMissing(s: DatabaseSettings, options: MigrateOptions): Promise<boolean> {
  const conn = await connectWithRetry(s, undefined, options);
  try {
    const [result] = await conn.query<mysql.ResultSetHeader>(
      `CREATE DATABASE IF NOT EXISTS \`${s.database.replaceAll('`', '``')}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
    return result.warningStatus === 0;
  } finally {
    await conn.end();
  }
}

/**
 * Opens a connection (text protocol, multi-statement, UTC), retrying errors that mean "not reachable yet" until
 * `connectRetryMs` has passed (./connect-retry.ts); other errors (bad credentials, unknown host name in the URL's
 * database) fail at once.
 */
async function connectWithRetry(s: DatabaseSettings, database: string | undefined, options: MigrateOptions): Promise<mysql.Connection> {
  return retryWhileUnavailable(() => mysql.createConnection({
    host: s.host, port: s.port, user: s.user, password: s.password, ...(database ? { database } : {}),
    multipleStatements: true, timezone: 'Z', connectTimeout: s.connectTimeoutMs, ...tlsOptions(s),
  }), options);
}

async function applyPending(conn: mysql.Connection, migrations: MigrationFile[]) {
  await conn.query(MIGRATIONS_TABLE_DDL);
  const [rows] = await conn.query<(AppliedRow & mysql.RowDataPacket)[]>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at FROM `_prisma_migrations` ORDER BY started_at',
  );
  const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
  const newest = migrations.at(-1)?.name ?? '';
  if (failed && failed.migration_name > newest && isApplied(rows, migrations)) {
    // A newer release's migration failed, and this is an older release running during that deploy's rollback
    // (CloudFormation rolls the migration trigger back by invoking the previous code). Its own migrations are
    // all in place, so there is nothing for it to do; refusing would leave the stack in UPDATE_ROLLBACK_FAILED.
    return { applied: [], alreadyApplied: migrations.map((m) => m.name), failedAhead: failed.migration_name };
  }
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

/** True when every migration of `migrations` is recorded as finished (and not rolled back) with its checksum. */
function isApplied(rows: readonly AppliedRow[], migrations: readonly MigrationFile[]): boolean {
  const done = new Map(rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => [r.migration_name, r.checksum]));
  return migrations.every((m) => done.get(m.name) === m.checksum);
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
