/**
 * What a run costs the database server, the one resource every job shares when deployed: rows written and bytes
 * written to the redo log (MariaDB/MySQL) or WAL (PostgreSQL), as deltas of the server's own counters over the
 * run, and which processes are the server (for their CPU, ./cpu.ts). The counters are server-wide (MariaDB's
 * status, PostgreSQL's WAL position) or database-wide (pg_stat_database): other clients of the server in the
 * window count too, which every printed line says.
 *
 * - MariaDB/MySQL: rows = Innodb_rows_inserted/updated/deleted where the server has them (MySQL), else
 *   Handler_write/update/delete (MariaDB 10.11 has no Innodb_rows_*; its Handler_* exclude internal temporary
 *   tables, which it counts apart as Handler_tmp_*); redo = Innodb_lsn_current (MariaDB), else
 *   Innodb_redo_log_current_lsn (MySQL ≥ 8.0.30), else Innodb_os_log_written; commits = Handler_commit.
 * - PostgreSQL: rows = tup_inserted/updated/deleted and commits = xact_commit of the bench database in
 *   pg_stat_database; WAL = pg_wal_lsn_diff of pg_current_wal_lsn() (the whole cluster). Since PostgreSQL 15
 *   each backend flushes its counts to shared memory at most once a second and, when idle, within 10 s: a
 *   reading first waits until the counts hold what the bench knows was written ({@link PostgresWrites}) and
 *   stop moving.
 * Commits count every committed transaction, read-only ones included.
 */
import { readFileSync } from 'node:fs';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { pidsNamed, processTreeGroup, type ProcessGroup } from './cpu.ts';

/** Rows written, commits and redo/WAL bytes, per job once divided. */
export interface DbWrites {
  inserted: number;
  updated: number;
  deleted: number;
  commits: number;
  logBytes: number;
}

/** A reading of the counters: `stop()` returns the deltas since `start`, and what they were read from. */
export interface DbWritesMeter {
  /** `runRows`: rows the caller knows the run wrote (PostgreSQL waits for its counts to include them). */
  stop(runRows?: WritesFloor): Promise<{ writes: DbWrites; source: string }>;
}

/** Rows a run is known to have inserted and deleted (e.g. its request and result rows; graphile-worker's jobs). */
export interface WritesFloor { inserted?: number; deleted?: number }

const perJob = (w: DbWrites, jobs: number): DbWrites => ({
  inserted: w.inserted / jobs, updated: w.updated / jobs, deleted: w.deleted / jobs, commits: w.commits / jobs, logBytes: w.logBytes / jobs,
});

/** `db_per_job server_cpu_ms=… rows_written=… (ins … upd … del …) commits=… log_bytes=…  (source)` for a run. */
export function formatDbCost(system: string, cpuMsPerJob: number | undefined, w: { writes: DbWrites; source: string } | undefined, jobs: number): string {
  if (!w) return '';
  const p = perJob(w.writes, jobs);
  const cpu = cpuMsPerJob === undefined ? 'n/a' : cpuMsPerJob.toFixed(2);
  return `db_per_job ${system} server_cpu_ms=${cpu} rows_written=${(p.inserted + p.updated + p.deleted).toFixed(2)}`
    + ` (ins=${p.inserted.toFixed(2)} upd=${p.updated.toFixed(2)} del=${p.deleted.toFixed(2)}) commits=${p.commits.toFixed(2)}`
    + ` log_bytes=${p.logBytes.toFixed(0)}  (${w.source})`;
}

/** The MariaDB/MySQL server's process: the pid in its @@pid_file when readable here, else every `mariadbd`/`mysqld`. */
export async function mariadbServerPids(admin: mysql.Connection): Promise<number[]> {
  const [[row]] = await admin.query<mysql.RowDataPacket[]>('SELECT @@pid_file AS f');
  try {
    const pid = Number(readFileSync(String(row?.f), 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0) return [pid];
  } catch {
    // another machine's server, or no permission: fall back to the names
  }
  return [...pidsNamed('mariadbd'), ...pidsNamed('mysqld')];
}

async function mariadbCounters(admin: mysql.Connection): Promise<Map<string, number>> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>(
    `SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_rows_inserted', 'Innodb_rows_updated', 'Innodb_rows_deleted',
      'Handler_write', 'Handler_update', 'Handler_delete', 'Handler_commit', 'Innodb_lsn_current', 'Innodb_redo_log_current_lsn', 'Innodb_os_log_written')`);
  return new Map(rows.map((r) => [String(r.Variable_name), Number(r.Value)]));
}

/** Starts reading MariaDB's counters (see the module comment for which). */
export async function startMariadbWrites(admin: mysql.Connection): Promise<DbWritesMeter> {
  const before = await mariadbCounters(admin);
  const innodbRows = before.has('Innodb_rows_inserted');
  const rowNames = innodbRows ? ['Innodb_rows_inserted', 'Innodb_rows_updated', 'Innodb_rows_deleted'] : ['Handler_write', 'Handler_update', 'Handler_delete'];
  const logName = ['Innodb_lsn_current', 'Innodb_redo_log_current_lsn', 'Innodb_os_log_written'].find((n) => before.has(n)) ?? 'Innodb_os_log_written';
  return {
    async stop() {
      const after = await mariadbCounters(admin);
      const d = (name: string) => (after.get(name) ?? NaN) - (before.get(name) ?? NaN);
      return {
        writes: { inserted: d(rowNames[0]!), updated: d(rowNames[1]!), deleted: d(rowNames[2]!), commits: d('Handler_commit'), logBytes: d(logName) },
        source: `MariaDB server-wide: ${innodbRows ? 'Innodb_rows_*' : 'Handler_write/update/delete'}, ${logName}, Handler_commit; other clients count too`,
      };
    },
  };
}

/**
 * The PostgreSQL cluster's processes as one group: the postmaster (from its data directory's postmaster.pid) and
 * its children, those that end during a run (autovacuum's workers) counted too (./cpu.ts `processTreeGroup`).
 */
export async function postgresServerPids(client: pg.Pool): Promise<ProcessGroup> {
  try {
    const { rows: [row] } = await client.query<{ data_directory: string }>('SHOW data_directory');
    const postmaster = Number(readFileSync(`${row!.data_directory}/postmaster.pid`, 'utf8').split('\n')[0]);
    if (Number.isInteger(postmaster) && postmaster > 0) return processTreeGroup(postmaster);
  } catch {
    // not superuser, or another machine's server: fall back to the name
  }
  return () => pidsNamed('postgres');
}

interface PgCounts { ins: number; upd: number; del: number; commits: number }

async function pgCounts(client: pg.Pool, database: string): Promise<PgCounts> {
  const { rows: [row] } = await client.query<Record<string, string>>(
    'SELECT tup_inserted AS ins, tup_updated AS upd, tup_deleted AS del, xact_commit AS commits FROM pg_stat_database WHERE datname = $1', [database]);
  return { ins: Number(row?.ins), upd: Number(row?.upd), del: Number(row?.del), commits: Number(row?.commits) };
}

/** PostgreSQL's longest wait before an idle backend flushes its counts (PGSTAT_IDLE_INTERVAL, 10 s), plus a margin. */
const PG_IDLE_FLUSH_MS = 11_000;
/** PostgreSQL's shortest interval between two flushes of one backend (PGSTAT_MIN_INTERVAL, 1 s), plus a margin. */
const PG_MIN_FLUSH_MS = 1_100;

/**
 * The counts once they hold at least `floor` (absolute) and two readings `stillMs` apart agree; gives up after
 * `timeoutMs` and says so.
 */
async function settledPgCounts(client: pg.Pool, database: string, floor: WritesFloor, stillMs: number, timeoutMs = 30_000): Promise<{ counts: PgCounts; settled: boolean }> {
  const deadline = Date.now() + timeoutMs;
  const same = (a: PgCounts, b: PgCounts) => a.ins === b.ins && a.upd === b.upd && a.del === b.del;
  await client.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
  let last = await pgCounts(client, database);
  for (;;) {
    await new Promise((r) => setTimeout(r, stillMs));
    const now = await pgCounts(client, database);
    if (same(now, last) && now.ins >= (floor.inserted ?? 0) && now.del >= (floor.deleted ?? 0)) return { counts: now, settled: true };
    if (Date.now() > deadline) return { counts: now, settled: false };
    last = now;
  }
}

/**
 * The PostgreSQL side of the bench database: a baseline taken once everything written so far is flushed (the
 * counts stay still for longer than an idle backend may hold them), then the rows the bench knows it wrote
 * since ({@link PostgresWrites.add}) are the floor every later reading waits for — a backend that has not
 * flushed yet cannot hide a run's rows in the next run's figures.
 */
export interface PostgresWrites {
  /** Rows the bench knows were written since the baseline (requests, result rows, graphile-worker's job rows). */
  add(rows: WritesFloor): void;
  /** Starts a meter: its readings wait until the counts hold every row added before them. */
  start(): Promise<DbWritesMeter>;
}

export async function postgresWrites(client: pg.Pool, database: string): Promise<PostgresWrites> {
  const { counts: baseline } = await settledPgCounts(client, database, {}, PG_IDLE_FLUSH_MS);
  const known = { inserted: 0, deleted: 0 };
  const floor = (): WritesFloor => ({ inserted: baseline.ins + known.inserted, deleted: baseline.del + known.deleted });
  const add = (rows: WritesFloor) => {
    known.inserted += rows.inserted ?? 0;
    known.deleted += rows.deleted ?? 0;
  };
  return {
    add,
    async start() {
      const { counts: before } = await settledPgCounts(client, database, floor(), PG_MIN_FLUSH_MS);
      const { rows: [lsn] } = await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn() AS lsn');
      return {
        async stop(runRows = {}) {
          const { rows: [wal] } = await client.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes', [lsn!.lsn]);
          add(runRows);
          const { counts: after, settled } = await settledPgCounts(client, database, floor(), PG_MIN_FLUSH_MS);
          return {
            writes: { inserted: after.ins - before.ins, updated: after.upd - before.upd, deleted: after.del - before.del, commits: after.commits - before.commits, logBytes: Number(wal!.bytes) },
            source: `PostgreSQL: pg_stat_database of ${database}${settled ? '' : ' (NOT SETTLED: counts may be short)'}, WAL of the whole cluster; other clients count too`,
          };
        },
      };
    },
  };
}
