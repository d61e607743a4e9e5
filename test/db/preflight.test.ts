/**
 * The deploy's preflight (lib/db/preflight.ts) on the real server: it passes on a server set as the stack sets
 * Aurora (the test server has the pinned sql_mode, UTC, utf8mb4 and the default isolation), and each check fails
 * with its message when its condition is broken for real — a greeting without CLIENT_MULTI_STATEMENTS (a relay
 * that clears the flag, as a proxy that does not offer it would), a pool that does not ask for it, a session with
 * NO_BACKSLASH_ESCAPES or without ONLY_FULL_GROUP_BY, another time zone, character set or isolation, a database
 * in latin1, and a statement size above the server's max_allowed_packet.
 */
import * as mariadb from 'mariadb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDatabaseUrl, poolOptions, withDatabase } from '../../lib/db/database-url.ts';
import { closeAfterLargeStatements } from '../../lib/db/large-statements.ts';
import { PreflightError, preflightDatabase, preflightDatabaseUrl, type PreflightProblem } from '../../lib/db/preflight.ts';
import { LARGEST_STATEMENT_BYTES, SQL_MODES } from '../../lib/db/server-settings.ts';
import { rawDb } from '../helpers/db.ts';
import { CLIENT_MULTI_STATEMENTS, startGreetingRelay, type GreetingRelay } from '../helpers/greeting-proxy.ts';

const url = () => process.env.DATABASE_URL ?? '';

/** A pool as the application makes one (lib/db/sql-pool.ts), with some options changed. */
function poolWith(overrides: Record<string, unknown>, databaseUrl = url()): mariadb.Pool {
  return closeAfterLargeStatements(mariadb.createPool({ ...poolOptions(parseDatabaseUrl(databaseUrl)), multipleStatements: true, ...overrides }));
}

/** The problems the preflight reports through `pool` (none: an empty list). */
async function problemsOf(pool: mariadb.Pool, options: { largestStatementBytes?: number } = {}): Promise<PreflightProblem[]> {
  try {
    await preflightDatabase(pool, 'the test server', options);
    return [];
  } catch (err) {
    if (!(err instanceof PreflightError)) throw err;
    return [...err.problems];
  } finally {
    await pool.end();
  }
}

describe('the preflight on a server set as the stack sets Aurora', () => {
  it('passes every check through a pool made as the application makes it, sending a statement of the largest size', async () => {
    const report = await preflightDatabaseUrl(url());
    expect(report.passed).toEqual(['multi-statements', 'sql_mode', 'time zone', 'character set', 'isolation', 'max_allowed_packet']);
    expect(report.serverVersion).not.toBe('');
  });
});

describe('each check fails with what is wrong and what to do', () => {
  let relay: GreetingRelay;
  beforeAll(async () => {
    const s = parseDatabaseUrl(url());
    relay = await startGreetingRelay({ host: s.host, port: s.port }, CLIENT_MULTI_STATEMENTS);
  });
  afterAll(async () => {
    await relay?.close();
  });

  it('multi-statements: a greeting without CLIENT_MULTI_STATEMENTS, which the driver silently accepts', async () => {
    const through = new URL(url());
    through.hostname = '127.0.0.1';
    through.port = String(relay.port);
    let error: unknown;
    await preflightDatabaseUrl(through.toString()).catch((err: unknown) => { error = err; });
    expect(error).toBeInstanceOf(PreflightError);
    const problems = (error as PreflightError).problems;
    expect(problems.map((p) => p.check)).toEqual(['multi-statements']);
    expect(problems[0]!.found).toMatch(/CLIENT_MULTI_STATEMENTS not negotiated.*ER_PARSE_ERROR/);
    expect((error as Error).message).toMatch(/deployment stops before any function changes[\s\S]*syntax error/);
  });

  it('multi-statements: a pool that does not ask for them', async () => {
    const problems = await problemsOf(poolWith({ multipleStatements: false }));
    expect(problems.map((p) => p.check)).toEqual(['multi-statements']);
  });

  it('sql_mode: a session with NO_BACKSLASH_ESCAPES', async () => {
    const problems = await problemsOf(poolWith({ sessionVariables: { sql_mode: [...SQL_MODES, 'NO_BACKSLASH_ESCAPES'].join(',') } }));
    expect(problems).toEqual([expect.objectContaining({ check: 'sql_mode', found: expect.stringContaining('extra NO_BACKSLASH_ESCAPES') })]);
    expect(problems[0]!.action).toMatch(/NO_BACKSLASH_ESCAPES breaks the driver's escaping.*parameter groups/);
  });

  it('sql_mode: a session without ONLY_FULL_GROUP_BY or strict mode', async () => {
    const lenient = SQL_MODES.filter((m) => m !== 'ONLY_FULL_GROUP_BY' && m !== 'STRICT_TRANS_TABLES').join(',');
    const problems = await problemsOf(poolWith({ sessionVariables: { sql_mode: lenient } }));
    expect(problems).toEqual([expect.objectContaining({ check: 'sql_mode', found: expect.stringContaining('missing ONLY_FULL_GROUP_BY, STRICT_TRANS_TABLES') })]);
    expect(problems[0]!.action).toMatch(/silently cut.*accepts what CI refuses/);
  });

  it('time zone: a session in another zone', async () => {
    const problems = await problemsOf(poolWith({ timezone: '+02:00' }));
    expect(problems).toEqual([expect.objectContaining({ check: 'session time zone', found: expect.stringContaining('"+02:00" (NOW() − UTC_TIMESTAMP() = 7200 s)') })]);
  });

  it('character set: a connection in latin1, and a database in latin1', async () => {
    const connection = await problemsOf(poolWith({ charset: 'latin1' }));
    expect(connection).toEqual([expect.objectContaining({
      check: 'character set and collation', found: 'character_set_client=latin1, character_set_connection=latin1, character_set_results=latin1',
    })]);
    const name = `aijobs_preflight_latin1_${process.pid}`;
    const admin = await rawDb();
    await admin.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET latin1 COLLATE latin1_swedish_ci`);
    try {
      const database = await problemsOf(poolWith({}, withDatabase(url(), name)));
      expect(database).toEqual([expect.objectContaining({ found: 'character_set_database=latin1, collation_database=latin1_swedish_ci' })]);
      expect(database[0]!.action).toContain('ALTER DATABASE');
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    }
  });

  it('isolation: a session whose default is READ COMMITTED', async () => {
    const [[names]] = await (await rawDb()).query("SHOW VARIABLES WHERE Variable_name IN ('transaction_isolation')") as unknown as [unknown[]];
    const variable = names ? 'transaction_isolation' : 'tx_isolation';
    // `SET @@tx_isolation` (the driver's sessionVariables) would set the next transaction's only; SESSION is needed.
    const problems = await problemsOf(poolWith({ initSql: `SET SESSION ${variable} = 'READ-COMMITTED'` }));
    expect(problems).toEqual([expect.objectContaining({ check: 'default isolation', found: '"READ-COMMITTED"', expected: '"REPEATABLE-READ"' })]);
  });

  it('max_allowed_packet: statements larger than the server accepts', async () => {
    const [[row]] = await (await rawDb()).query('SELECT @@max_allowed_packet AS n') as unknown as [{ n: number }[]];
    const problems = await problemsOf(poolWith({}), { largestStatementBytes: Number(row!.n) + 1024 });
    expect(problems).toEqual([expect.objectContaining({ check: 'max_allowed_packet', found: `${row!.n} bytes` })]);
    expect(Number(row!.n)).toBeGreaterThanOrEqual(LARGEST_STATEMENT_BYTES);
  });
});
