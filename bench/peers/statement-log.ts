/**
 * The database's own record of what our runtime sends: MariaDB's general query log (as a table) over a
 * measured window, restricted to the connections of a database user created for the window, which nothing
 * else on the (shared) server uses. The log is server-wide and tests may hold it at the same time, so it is
 * taken and given back under the tests' reference-counted protocol (test/helpers/general-log.ts); it is
 * truncated afterwards only when no holder is left and it is off.
 */
import type mysql from 'mysql2/promise';
import { createLoggedUser, dropLoggedUser, holdGeneralLog, releaseGeneralLog, serverNow, type GeneralLogRow } from '../../test/helpers/general-log.ts';

export interface LoggedWindow<T> {
  result: T;
  rows: GeneralLogRow[];
  /** False when the log was switched off by someone else during the window (the rows are then incomplete). */
  complete: boolean;
}

/**
 * Holds the log; gives `run` a database URL for a fresh user of `database`; runs it, marking the measured part
 * with `markStart`/`markEnd` (server clock); returns the log rows of that user's connections in the window.
 */
export async function withStatementLog<T>(
  admin: mysql.Connection, database: string, urlFor: (user: string, password: string) => string,
  run: (url: string, marks: { start(): Promise<void>; end(): Promise<void> }) => Promise<T>,
): Promise<LoggedWindow<T>> {
  const holder = `bench-peers-${process.pid}`;
  await holdGeneralLog(admin, holder);
  const { user, password } = await createLoggedUser(admin, database);
  // A bench stopped during the window (Ctrl-C, kill) gives the log back first: a holder left behind keeps the
  // server-wide log on, and every later run on that server pays for it.
  const stopped = (signal: NodeJS.Signals) => {
    void releaseGeneralLog(admin, holder).then(() => dropLoggedUser(admin, user)).catch(() => undefined)
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', stopped);
  process.once('SIGTERM', stopped);
  try {
    const loggedFrom = await serverNow(admin);
    let start = loggedFrom;
    let end = '';
    let complete = true;
    const result = await run(urlFor(user, password), {
      start: async () => { start = await serverNow(admin); },
      end: async () => {
        end = await serverNow(admin);
        const [[row]] = await admin.query<mysql.RowDataPacket[]>('SELECT @@GLOBAL.general_log AS on_');
        complete = Number(row?.on_) === 1;
      },
    });
    const [rows] = await admin.query<mysql.RowDataPacket[]>(
      `SELECT thread_id AS threadId, command_type AS command, CONVERT(argument USING utf8mb4) AS argument
       FROM mysql.general_log
       WHERE event_time >= ? AND event_time <= ? AND thread_id IN (
         SELECT thread_id FROM mysql.general_log WHERE event_time >= ? AND command_type = 'Connect' AND argument LIKE ?)`,
      [start, end, loggedFrom, `${user}@%`],
    );
    return { result, complete, rows: rows.map((r) => ({ threadId: Number(r.threadId), command: String(r.command), argument: String(r.argument) })) };
  } finally {
    process.off('SIGINT', stopped);
    process.off('SIGTERM', stopped);
    await releaseGeneralLog(admin, holder);
    await dropLoggedUser(admin, user);
    await truncateIfUnheld(admin);
  }
}

/** Empties the log table when it is off and nobody holds it (the holders' lock keeps a new holder out meanwhile). */
async function truncateIfUnheld(admin: mysql.Connection): Promise<void> {
  const [[lock]] = await admin.query<mysql.RowDataPacket[]>("SELECT GET_LOCK('aijobs_test_general_log', 30) AS ok");
  if (Number(lock?.ok) !== 1) return;
  try {
    const [[state]] = await admin.query<mysql.RowDataPacket[]>(
      'SELECT (SELECT COUNT(*) FROM `aijobs_test_shared`.`general_log_holders`) AS holders, @@GLOBAL.general_log AS on_');
    if (Number(state?.holders) === 0 && Number(state?.on_) === 0) await admin.query('TRUNCATE TABLE mysql.general_log');
  } finally {
    await admin.query("SELECT RELEASE_LOCK('aijobs_test_general_log')");
  }
}
