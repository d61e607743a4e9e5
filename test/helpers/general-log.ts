/**
 * The server's general query log, read as a table, for tests that check what the application sends (the RDS
 * Proxy rules in docs/deploy.md). The log is server-wide and other test processes on the machine may use it
 * at the same time, so:
 * - it is switched on under a reference count kept in a table of holders, and switched off only by the last
 *   holder, and only when it was off before the first one took it; it is never truncated;
 * - a test reads only the rows of its own connections: those of a database user created for it
 *   ({@link createLoggedUser}), which nothing else on the server uses.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';

const HOLDERS = '`aijobs_test_shared`.`general_log_holders`';
/** A holder older than this is a test process that died without releasing: it no longer counts. */
const STALE_HOLDER_MINUTES = 60;

/** One row of `mysql.general_log`. */
export interface GeneralLogRow {
  threadId: number;
  command: string;
  argument: string;
}

/** The server's clock, as `mysql.general_log.event_time` shows it: read it before the workload starts. */
export async function serverNow(admin: mysql.Connection): Promise<string> {
  const [[row]] = await admin.query<mysql.RowDataPacket[]>("SELECT DATE_FORMAT(NOW(6), '%Y-%m-%d %H:%i:%s.%f') AS now");
  return String(row?.now);
}

/** A server connection as root (the URL's user), with no database, for log and user administration. */
export async function adminConnection(databaseUrl: string): Promise<mysql.Connection> {
  const s = parseDatabaseUrl(databaseUrl);
  return mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password, multipleStatements: true });
}

/** Switches the general log on (to the table) for `holder`; see the module comment for the sharing rules. */
export async function holdGeneralLog(admin: mysql.Connection, holder: string): Promise<void> {
  await admin.query(`CREATE DATABASE IF NOT EXISTS \`aijobs_test_shared\`;
    CREATE TABLE IF NOT EXISTS ${HOLDERS} (holder VARCHAR(100) PRIMARY KEY, since DATETIME NOT NULL, restoreOff TINYINT NOT NULL)`);
  await withHoldersLock(admin, async () => {
    await admin.query(`DELETE FROM ${HOLDERS} WHERE since < NOW() - INTERVAL ${STALE_HOLDER_MINUTES} MINUTE`);
    const [[state]] = await admin.query<mysql.RowDataPacket[]>(
      `SELECT COUNT(*) AS n, COALESCE(MAX(restoreOff), @@GLOBAL.general_log = 0) AS restoreOff,
              @@GLOBAL.log_output AS output FROM ${HOLDERS}`,
    );
    if (!String(state?.output).includes('TABLE')) await admin.query(`SET GLOBAL log_output = '${String(state?.output)},TABLE'`);
    await admin.query('SET GLOBAL general_log = 1');
    await admin.query(`INSERT INTO ${HOLDERS} VALUES (?, NOW(), ?)`, [holder, Number(state?.restoreOff ?? 0)]);
  });
}

/** Gives the log back; the last holder switches it off if it was off before the first holder came. */
export async function releaseGeneralLog(admin: mysql.Connection, holder: string): Promise<void> {
  await withHoldersLock(admin, async () => {
    const [[mine]] = await admin.query<mysql.RowDataPacket[]>(`SELECT restoreOff FROM ${HOLDERS} WHERE holder = ?`, [holder]);
    await admin.query(`DELETE FROM ${HOLDERS} WHERE holder = ?`, [holder]);
    const [[left]] = await admin.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${HOLDERS}`);
    if (Number(left?.n) === 0 && Number(mine?.restoreOff) === 1) await admin.query('SET GLOBAL general_log = 0');
  });
}

/** Serialises holders across processes with a server lock (test plumbing on the admin connection only). */
async function withHoldersLock(admin: mysql.Connection, fn: () => Promise<void>): Promise<void> {
  const [[lock]] = await admin.query<mysql.RowDataPacket[]>("SELECT GET_LOCK('aijobs_test_general_log', 30) AS ok");
  if (Number(lock?.ok) !== 1) throw new Error('could not take the general-log holders lock within 30 s');
  try {
    await fn();
  } finally {
    await admin.query("SELECT RELEASE_LOCK('aijobs_test_general_log')");
  }
}

/** A database user of its own, with every privilege on `database`: its log rows are this test's rows. */
export async function createLoggedUser(admin: mysql.Connection, database: string): Promise<{ user: string; password: string }> {
  const user = `pin_${randomBytes(6).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
  await admin.query(`GRANT ALL PRIVILEGES ON \`${database.replaceAll('`', '``')}\`.* TO '${user}'@'%'`);
  return { user, password };
}

export async function dropLoggedUser(admin: mysql.Connection, user: string): Promise<void> {
  await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
}

/**
 * Every log row of the connections `user` opened, in order. A connection is the user's when its `Connect`
 * row names the user (`pin_x@host as anonymous on db`); later rows of that thread carry the same thread id.
 */
export async function logRowsOf(admin: mysql.Connection, user: string, since: string): Promise<GeneralLogRow[]> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>(
    `SELECT thread_id AS threadId, command_type AS command, CONVERT(argument USING utf8mb4) AS argument
     FROM mysql.general_log
     WHERE event_time >= ? AND thread_id IN (
       SELECT thread_id FROM mysql.general_log WHERE event_time >= ? AND command_type = 'Connect' AND argument LIKE ?)
     ORDER BY event_time, thread_id`,
    [since, since, `${user}@%`],
  );
  return rows.map((r) => ({ threadId: Number(r.threadId), command: String(r.command), argument: String(r.argument) }));
}

/**
 * A database user of its own with the log held, for a test that reads back what it sent: `url` connects as
 * the user; `since` is the server's time before its first connection; `release()` gives everything back.
 */
export async function loggedUser(databaseUrl: string, holder: string): Promise<{
  admin: mysql.Connection; user: string; url: string; since: string; rows(): Promise<GeneralLogRow[]>; release(): Promise<void>;
}> {
  const admin = await adminConnection(databaseUrl);
  const { user, password } = await createLoggedUser(admin, parseDatabaseUrl(databaseUrl).database);
  await holdGeneralLog(admin, holder);
  const since = await serverNow(admin);
  const url = new URL(databaseUrl);
  url.username = user;
  url.password = password;
  return {
    admin, user, url: url.toString(), since,
    rows: () => logRowsOf(admin, user, since),
    release: async () => {
      await releaseGeneralLog(admin, holder).catch(() => undefined);
      await dropLoggedUser(admin, user).catch(() => undefined);
      await admin.end();
    },
  };
}

/** Splits a multi-statement text at top-level semicolons (quotes and backslash escapes respected), trimmed; literals kept. */
export function splitStatements(text: string): string[] {
  const out: string[] = [];
  let quote = '';
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === ';') {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}
