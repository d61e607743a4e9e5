/**
 * The test server runs with the production server's `sql_mode` and time zone (lib/db/server-settings.ts, what the
 * stack's parameter groups pin), so a query MySQL 8 would refuse under `ONLY_FULL_GROUP_BY` or strict mode fails
 * in CI too. Set as GLOBAL values, which every later connection starts with: the pools under test use the
 * production pool code unchanged, and nothing can forget a per-session setting. Called by the test global setup
 * (test/setup/global-setup.ts) before any test connects, and by .ci/run (`npm run db:test-server`).
 *
 * The server is shared by every test run on the machine: this only ever sets the pinned values, never others.
 */
import mysql from 'mysql2/promise';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';
import { CLIENT_SQL_MODES, SQL_MODE, SQL_MODES } from '../../lib/db/server-settings.ts';

const UTC = new Set(['UTC', '+00:00', 'Etc/UTC']);

/** The modes of an `sql_mode` value, as a sorted list. */
export function modesOf(sqlMode: string): string[] {
  return sqlMode.split(',').map((m) => m.trim().toUpperCase()).filter(Boolean).sort();
}

async function readGlobals(conn: mysql.Connection): Promise<{ sqlMode: string; timeZone: string; systemTimeZone: string }> {
  const [[row]] = await conn.query<mysql.RowDataPacket[]>(
    'SELECT @@GLOBAL.sql_mode AS sqlMode, @@GLOBAL.time_zone AS timeZone, @@system_time_zone AS systemTimeZone',
  );
  return { sqlMode: String(row?.sqlMode), timeZone: String(row?.timeZone), systemTimeZone: String(row?.systemTimeZone) };
}

const isUtc = (g: { timeZone: string; systemTimeZone: string }) => UTC.has(g.timeZone === 'SYSTEM' ? g.systemTimeZone : g.timeZone);

/**
 * Gives the server at `serverUrl` the pinned `sql_mode` (and UTC, when its zone is another) unless it has them,
 * then checks from a new session that they hold.
 * @throws when the user may not set global variables, or the server does not keep them
 */
export async function pinTestServerSettings(serverUrl: string): Promise<void> {
  const s = parseDatabaseUrl(serverUrl);
  const connect = () => mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password });
  const admin = await connect();
  try {
    const before = await readGlobals(admin);
    if (modesOf(before.sqlMode).join() !== [...SQL_MODES].sort().join()) await admin.query('SET GLOBAL sql_mode = ?', [SQL_MODE]);
    if (!isUtc(before)) await admin.query("SET GLOBAL time_zone = '+00:00'");
  } catch (err) {
    throw new Error(
      `the test server must run with sql_mode "${SQL_MODE}" and in UTC (lib/db/server-settings.ts), and setting them failed: ${(err as Error).message}. ` +
      `Connect as a user allowed to SET GLOBAL (root on the local server), or set sql_mode and default-time-zone in the server's configuration.`,
      { cause: err },
    );
  } finally {
    await admin.end();
  }
  const check = await connect();
  try {
    const [[session]] = await check.query<mysql.RowDataPacket[]>('SELECT @@SESSION.sql_mode AS sqlMode');
    // IGNORE_SPACE comes from the client's handshake (CLIENT_SQL_MODES), not from the server.
    const sessionModes = modesOf(String(session?.sqlMode)).filter((m) => !(CLIENT_SQL_MODES as readonly string[]).includes(m));
    if (sessionModes.join() !== [...SQL_MODES].sort().join()) {
      throw new Error(`the test server's new sessions start with sql_mode "${String(session?.sqlMode)}", not "${SQL_MODE}"`);
    }
  } finally {
    await check.end();
  }
}
