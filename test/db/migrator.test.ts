import { createHash } from 'node:crypto';
import { appendFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseDatabaseUrl, withDatabase } from '../../lib/db/database-url.ts';
import { DEFAULT_MIGRATIONS_DIR, MigrationError, migrateDatabase, readMigrations } from '../../lib/db/migrator.ts';

const serverUrl = process.env.DATABASE_URL ?? '';
const runId = `${process.pid}_${Date.now().toString(36)}`;
let admin: mysql.Connection;
let counter = 0;
const scratchDatabases: string[] = [];
const tempDirs: string[] = [];

/** A database name no one has used yet on this server; dropped after the test. */
function scratchUrl(): { url: string; database: string } {
  const database = `aijobs_test_mig_${runId}_${++counter}`;
  scratchDatabases.push(database);
  return { url: withDatabase(serverUrl, database), database };
}

/** A private copy of prisma/migrations, optionally with extra migrations appended. */
async function migrationsCopy(extra: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'aijobs-migrations-'));
  tempDirs.push(dir);
  await cp(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

interface MigrationRow extends mysql.RowDataPacket {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
}

async function historyOf(database: string): Promise<MigrationRow[]> {
  const [rows] = await admin.query<MigrationRow[]>(`SELECT * FROM \`${database}\`._prisma_migrations ORDER BY started_at, migration_name`);
  return rows;
}

async function databaseExists(database: string): Promise<boolean> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>('SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [database]);
  return rows.length === 1;
}

beforeAll(async () => {
  const s = parseDatabaseUrl(serverUrl);
  admin = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password });
});

afterEach(async () => {
  if (process.env.KEEP_TEST_DATABASES !== '1') {
    for (const db of scratchDatabases.splice(0)) await admin.query(`DROP DATABASE IF EXISTS \`${db}\``);
  }
  for (const dir of tempDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

afterAll(async () => {
  await admin?.end();
});

describe('migrateDatabase', () => {
  it('creates a missing database and applies every migration in name order', async () => {
    const { url, database } = scratchUrl();
    const names = (await readMigrations()).map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);
    expect(await databaseExists(database)).toBe(false);

    const result = await migrateDatabase(url);

    expect(result).toEqual({ database, created: true, applied: names, alreadyApplied: [] });
    expect(await databaseExists(database)).toBe(true);
    expect((await historyOf(database)).map((r) => r.migration_name)).toEqual(names);
  });

  it('applies nothing on a second run', async () => {
    const { url, database } = scratchUrl();
    await migrateDatabase(url);
    const before = await historyOf(database);

    const again = await migrateDatabase(url);

    expect(again).toEqual({ database, created: false, applied: [], alreadyApplied: before.map((r) => r.migration_name) });
    expect(await historyOf(database)).toEqual(before);
  });

  it('records each migration as Prisma does: sha256 of migration.sql, a UUID id, finished, one step', async () => {
    const { url, database } = scratchUrl();
    await migrateDatabase(url);
    for (const row of await historyOf(database)) {
      const sql = await readFile(path.join(DEFAULT_MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.applied_steps_count).toBe(1);
      expect(row.logs).toBeNull();
      expect(row.rolled_back_at).toBeNull();
    }
  });

  it("creates _prisma_migrations with Prisma's own column layout", async () => {
    const { url, database } = scratchUrl();
    await migrateDatabase(url);
    const [columns] = await admin.query<mysql.RowDataPacket[]>(
      `SELECT COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_KEY AS k
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = '_prisma_migrations' ORDER BY ORDINAL_POSITION`,
      [database],
    );
    // MariaDB and MySQL 5.7 print `int(10) unsigned`, MySQL 8 `int unsigned`.
    const layout = columns.map((c) => `${c.name} ${String(c.type).replace('int(10)', 'int')}${c.nullable === 'NO' ? ' NOT NULL' : ''}${c.k === 'PRI' ? ' PRIMARY' : ''}`);
    expect(layout).toEqual([
      'id varchar(36) NOT NULL PRIMARY',
      'checksum varchar(64) NOT NULL',
      'finished_at datetime(3)',
      'migration_name varchar(255) NOT NULL',
      'logs text',
      'rolled_back_at datetime(3)',
      'started_at datetime(3) NOT NULL',
      'applied_steps_count int unsigned NOT NULL',
    ]);
  });

  it('refuses to run when an applied migration was edited afterwards', async () => {
    const { url } = scratchUrl();
    const dir = await migrationsCopy();
    await migrateDatabase(url, dir);
    const first = (await readMigrations(dir))[0]!.name;
    await appendFile(path.join(dir, first, 'migration.sql'), '\n-- edited after it was applied\n');

    const run = migrateDatabase(url, dir);

    await expect(run).rejects.toThrow(MigrationError);
    await expect(run).rejects.toThrow(`migration ${first} was edited after it was applied`);
  });

  it('records a failing script in logs, leaves finished_at NULL, and refuses the next run', async () => {
    const { url, database } = scratchUrl();
    const dir = await migrationsCopy({ '29990101000000_broken': 'ALTER TABLE `NoSuchTable` ADD COLUMN `x` INT;' });

    await expect(migrateDatabase(url, dir)).rejects.toThrow(/migration 29990101000000_broken failed: .*NoSuchTable/);

    const broken = (await historyOf(database)).find((r) => r.migration_name === '29990101000000_broken');
    expect(broken).toMatchObject({ finished_at: null, rolled_back_at: null, applied_steps_count: 0 });
    expect(broken?.logs).toMatch(/NoSuchTable/);
    const next = migrateDatabase(url, dir);
    await expect(next).rejects.toThrow(MigrationError);
    await expect(next).rejects.toThrow(/29990101000000_broken failed earlier/);
  });

  it("lets the previous release's runner succeed over a newer release's failed migration (a deploy's rollback), and nothing else", async () => {
    const { url, database } = scratchUrl();
    const previous = await migrationsCopy();
    const next = await migrationsCopy({ '29990101000000_broken': 'ALTER TABLE `NoSuchTable` ADD COLUMN `x` INT;' });
    await expect(migrateDatabase(url, next)).rejects.toThrow(/29990101000000_broken failed/);

    // CloudFormation's rollback invokes the previous release's migration function: its migrations are all there.
    const rollback = await migrateDatabase(url, previous);
    expect(rollback).toMatchObject({ applied: [], failedAhead: '29990101000000_broken' });
    expect(rollback.alreadyApplied).toEqual((await readMigrations(previous)).map((m) => m.name));
    // The failure stays on record, and the release that shipped it still refuses to run past it.
    expect((await historyOf(database)).find((r) => r.migration_name === '29990101000000_broken')).toMatchObject({ finished_at: null });
    await expect(migrateDatabase(url, next)).rejects.toThrow(/29990101000000_broken failed earlier/);

    // A runner missing some of its own migrations does not pass over a failure, whatever its name.
    const older = await migrationsCopy({ '29980101000000_never_applied': 'CREATE TABLE `Late` (`id` INT PRIMARY KEY);' });
    await expect(migrateDatabase(url, older)).rejects.toThrow(/29990101000000_broken failed earlier/);
  });

  it('lets two concurrent runs on a new database both succeed, applying each migration once', async () => {
    const { url, database } = scratchUrl();
    const dir = await migrationsCopy({ '29990101000000_add_probe': 'CREATE TABLE `Probe` (`id` INT PRIMARY KEY);' });
    const names = (await readMigrations(dir)).map((m) => m.name);

    const [a, b] = await Promise.all([migrateDatabase(url, dir), migrateDatabase(url, dir)]);

    expect([...a.applied, ...b.applied].sort()).toEqual(names);
    expect([a.applied.length, b.applied.length].sort()).toEqual([0, names.length]);
    const rows = await historyOf(database);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
  });

  it('rejects a URL that names no database', async () => {
    await expect(migrateDatabase(withDatabase(serverUrl, ''))).rejects.toThrow(MigrationError);
  });

  it('upgrades a database holding data: identifiers become exact, FKs hold, in-flight outbox claims keep a lease', async () => {
    const { url, database } = scratchUrl();
    const upTo = await migrationsCopy();
    // The database as it stood before the identifiers changed: that migration and every later one are left out
    // (a later one may depend on it, e.g. a foreign key to the exact AiJob.id).
    const later = (await readMigrations(upTo)).map((m) => m.name).filter((name) => name >= '20261130000000_exact_identifiers');
    for (const name of later) await rm(path.join(upTo, name), { recursive: true });
    await migrateDatabase(url, upTo);
    const db = `\`${database}\``;
    const lockedAt = new Date('2026-11-29T10:00:00.000Z');
    await admin.query(
      `INSERT INTO ${db}.AiJob (id, userId, jobType, triggerType, targetType, targetId, idempotencyKey, inputHash, lifecycleStatus,
         queueName, priority, maxAttempts, timeoutMs, inputSchemaVersion, outputSchemaVersion, promptKey, promptVersion, modelTier,
         credentialMode, createdAt, updatedAt)
       VALUES ('01JOBAAAAAAAAAAAAAAAAAAAAA', 'alice', 'synthetic_job', 'user', 'user', 'alice', 'k1', REPEAT('0', 64), 'queued',
         'interactive', 50, 3, 30000, 'v1', 'v1', 'synthetic', 'v1', 'fast', 'platform_key', NOW(3), NOW(3))`,
    );
    await admin.query(
      `INSERT INTO ${db}.OutboxEvent (id, eventType, aggregateType, aggregateId, dedupeKey, payload, queueName, status, availableAt,
         lockedBy, lockedAt, createdAt, updatedAt)
       VALUES ('01OUTAAAAAAAAAAAAAAAAAAAAA', 'ai.job.enqueue', 'AiJob', '01JOBAAAAAAAAAAAAAAAAAAAAA', 'ai.job.enqueue:01JOBAAAAAAAAAAAAAAAAAAAAA',
         '{"jobId":"01JOBAAAAAAAAAAAAAAAAAAAAA"}', 'interactive', 'processing', '2026-11-29 09:59:00.000', 'old:1', ?, NOW(3), NOW(3))`,
      [lockedAt],
    );

    expect((await migrateDatabase(url)).applied).toEqual(later);
    expect(later.slice(0, 2)).toEqual(['20261130000000_exact_identifiers', '20261130010000_outbox_claim_lease']);

    const [[outbox]] = await admin.query<mysql.RowDataPacket[]>(`SELECT availableAt FROM ${db}.OutboxEvent`);
    expect(outbox?.availableAt).toEqual(new Date(lockedAt.getTime() + 60_000));
    // 'ALICE' is another user now: the same idempotency key is free for them.
    await admin.query(
      `INSERT INTO ${db}.AiJob (id, userId, jobType, triggerType, targetType, targetId, idempotencyKey, inputHash, lifecycleStatus,
         queueName, priority, maxAttempts, timeoutMs, inputSchemaVersion, outputSchemaVersion, promptKey, promptVersion, modelTier,
         credentialMode, parentJobId, createdAt, updatedAt)
       SELECT '01JOBBBBBBBBBBBBBBBBBBBBBB', 'ALICE', jobType, triggerType, targetType, 'ALICE', 'k1', inputHash, lifecycleStatus, queueName,
         priority, maxAttempts, timeoutMs, inputSchemaVersion, outputSchemaVersion, promptKey, promptVersion, modelTier, credentialMode,
         id, createdAt, updatedAt FROM ${db}.AiJob WHERE id = '01JOBAAAAAAAAAAAAAAAAAAAAA'`,
    );
    const [[alice]] = await admin.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${db}.AiJob WHERE userId = 'alice'`);
    expect(Number(alice?.n)).toBe(1);
    // The foreign keys are back: a transition for a job that does not exist is refused.
    await expect(admin.query(
      `INSERT INTO ${db}.AiJobTransition (id, jobId, toStatus, actor, createdAt) VALUES ('01TRAAAAAAAAAAAAAAAAAAAAAA', '01NOSUCHJOBAAAAAAAAAAAAAAA', 'queued', 'test', NOW(3))`,
    )).rejects.toThrow(/foreign key constraint fails/);
  });
});
