/**
 * The SQL lint (test/helpers/sql-lint.ts) over every migration and every SQL literal of lib/, and on seeded bad
 * examples, each of which it must refuse.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readMigrations } from '../../lib/db/migrator.ts';
import { lintApplicationSql, lintMigration, sqlLiteralsOf } from '../helpers/sql-lint.ts';

const LIB = fileURLToPath(new URL('../../lib', import.meta.url));

/** lib/'s production sources (not the generated Prisma client, not tests). */
function libSources(): { file: string; source: string }[] {
  return readdirSync(LIB, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.parentPath.includes(`${path.sep}generated`))
    .map((e) => path.join(e.parentPath, e.name))
    .map((file) => ({ file: path.relative(LIB, file), source: readFileSync(file, 'utf8') }));
}

const rules = (problems: { rule: string }[]) => problems.map((p) => p.rule);

describe('migrations', () => {
  it('all parse as MySQL, use no MariaDB-only DDL, and name a portable collation on every CREATE TABLE', async () => {
    const migrations = await readMigrations();
    expect(migrations.length).toBeGreaterThan(5);
    expect(migrations.flatMap((m) => lintMigration(m.name, m.sql))).toEqual([]);
  });

  it('refuses seeded bad examples', () => {
    const lint = (sql: string) => rules(lintMigration('seeded', sql));
    expect(lint('CREATE TABLE `T` (`id` INT NOT NULL, PRIMARY KEY (`id`)) DEFAULT CHARACTER SET utf8mb4;')).toEqual(['CREATE TABLE names no collation']);
    expect(lint('CREATE TABLE `T` (`id` INT NOT NULL) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci;')).toEqual(['collation unknown to MySQL 8 or MariaDB 10.11']);
    expect(lint('ALTER TABLE `T` ADD COLUMN IF NOT EXISTS `x` INT NULL;')).toContain('IF [NOT] EXISTS on a column or index (MariaDB only)');
    expect(lint('ALTER TABLE `T` DROP INDEX IF EXISTS `T_x_idx`;')).toContain('IF [NOT] EXISTS on a column or index (MariaDB only)');
    expect(lint('CREATE INDEX IF NOT EXISTS `T_x_idx` ON `T`(`x`);')).toContain('does not parse as MySQL 8 (node-sql-parser, MySQL grammar)');
    expect(lint('CREATE OR REPLACE TABLE `T` (`id` INT) COLLATE utf8mb4_bin;')).toContain('CREATE OR REPLACE (MariaDB only for tables and indexes)');
    expect(lint('CREATE SEQUENCE `s`;')).toContain('sequences (MariaDB only)');
    // A sound migration passes, comments and quoted text included.
    expect(lint("-- adds a column\nALTER TABLE `T` ADD COLUMN `note` VARCHAR(20) NOT NULL DEFAULT 'x := @y RETURNING';")).toEqual([]);
  });
});

describe("the application's SQL in lib/", () => {
  it('has no RETURNING, sequence, user variable, unlisted SET, MariaDB-only function or named lock outside the migrator', () => {
    const sources = libSources();
    expect(sources.length).toBeGreaterThan(100);
    // Not vacuous: the SQL of the hot paths is among what is read.
    const sql = sources.flatMap(({ file, source }) => sqlLiteralsOf(file, source));
    expect(sql.length).toBeGreaterThan(60);
    expect(sql.some((s) => s.includes('FOR UPDATE SKIP LOCKED'))).toBe(true);
    expect(sql).toContain('SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION');
    expect(sources.flatMap(({ file, source }) => lintApplicationSql(file, source, file === path.join('db', 'migrator.ts')))).toEqual([]);
  });

  it('refuses seeded bad examples', () => {
    const lint = (sql: string) => rules(lintApplicationSql('seeded.ts', `export const q = ${JSON.stringify(sql)};`));
    const lintTemplate = (template: string) => rules(lintApplicationSql('seeded.ts', `export const q = \`${template}\`;`));
    expect(lint('INSERT INTO `AiJob` (id) VALUES (?) RETURNING id')).toEqual(['RETURNING (MariaDB only)']);
    expect(lint('SELECT NEXTVAL(job_seq) AS id')).toEqual(['sequences (MariaDB only)']);
    expect(lint('SET @claimed = 0; UPDATE `OutboxEvent` SET status = ? WHERE id = ?')).toEqual(['user variable (pins an RDS Proxy session)', 'SET outside the allow-list (docs/deploy.md)']);
    expect(lint('SELECT @n := @n + 1 FROM `AiJob`')).toEqual(['user variable (pins an RDS Proxy session)', ':= assignment (user variables; deprecated in MySQL 8)']);
    expect(lint("SET SESSION sql_mode = ''; SELECT 1")).toEqual(['SET outside the allow-list (docs/deploy.md)']);
    expect(lint('SELECT JSON_DETAILED(payload) FROM `OutboxEvent` WHERE id = ?')).toEqual(['MariaDB-only function']);
    expect(lint('SELECT id FROM `OutboxEvent` WHERE status = ? FOR UPDATE WAIT 5')).toEqual(['FOR UPDATE WAIT n / LIMIT ROWS EXAMINED / FETCH FIRST (MariaDB only)']);
    expect(lint("SELECT GET_LOCK('x', 1) FROM DUAL")).toEqual(['named lock outside the migrator (pins an RDS Proxy session)']);
    expect(lint('CREATE TEMPORARY TABLE t (id INT)')).toEqual(['temporary table or table lock (pins an RDS Proxy session)']);
    // Allowed: the listed SETs, an UPDATE's SET after a substitution, system variables, values that merely look bad.
    expect(lintTemplate('SET SESSION wait_timeout = ?; ${BEGIN}; SELECT @@SESSION.sql_mode, ? AS a FROM DUAL')).toEqual([]);
    expect(lintTemplate("UPDATE ${TABLE} SET status = 'x := @y RETURNING' WHERE id = ?")).toEqual([]);
    expect(lintTemplate('UPDATE ${TABLE} SET a = 1; SET SESSION wait_timeout = 3600')).toEqual([]);
    expect(lintTemplate('${BEGIN}; SET SESSION sql_mode = ?')).toEqual(['SET outside the allow-list (docs/deploy.md)']);
  });
});
