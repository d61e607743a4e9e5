/**
 * One timed run of a system, the same shape for ours and for a peer: meters started (CPU per process group,
 * ./cpu.ts; the database server's writes, ./db-cost.ts), the load offered, the run waited out, the meters read,
 * one figures line and one database line printed. Used by bench/peers.ts and bench/capacity.ts.
 *
 * Where a run ends: ours once no job is queued or running and every outbox row is settled (the terminal events
 * are published by the scheduled dispatcher, every 2 s locally, up to 2 s after the last job), so its CPU and
 * database figures include publishing them and one run's events are not the next run's load; a peer once its
 * handler recorded every job done.
 */
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { formatFigures, offerLoad, type LoadPlan, type LoadResult, type RunFigures } from './load.ts';
import { oursFigures, waitForOursIdle, waitForOutboxSettled, type OursHost } from './ours.ts';
import { pidsNamed, processTree, startCpuMeter, threadsCpuMs, threadsIo, type ProcessGroup } from './cpu.ts';
import { formatDbCost, startMariadbWrites, type PostgresWrites } from './db-cost.ts';
import { waitForDone } from './peer-task.ts';
import type { PeerSystem } from './peer-system.ts';
import { benchUserId, type BenchWorkload } from './workload.ts';
import type { UserGroup } from './ours-host.ts';

/** What every run needs: the side connections, the server processes to meter, where lines go. */
export interface RunContext {
  admin: mysql.Connection;
  /** Our bench database (MariaDB). */
  database: string;
  mariadbPids: number[];
  /** The emulators' process (its tree: fauxqs, the mock, moto_server). */
  emulatorsPid: number;
  /** The peers' PostgreSQL database, when the server is there. */
  pg?: { pool: pg.Pool; database: string; serverPids: ProcessGroup; writes: PostgresWrites } | undefined;
  report(line: string): void;
}

/** A submission of ours: the client timings, the job ids, and (over HTTP) each job's submit instant on `Date.now()`. */
export interface OursSubmission { load: Pick<LoadResult, 'firstSentMs' | 'lastReturnedMs'>; ids: string[]; submitWallMs?: number[] }

/** The runtime's CPU split by thread group, MariaDB's, the emulators', and this process's (the clients). */
function oursCpuGroups(ctx: RunContext, host: OursHost) {
  const thread = (pick: (name: string) => boolean) => ({ readMs: () => threadsCpuMs(host.pid, pick) ?? 0, readIo: () => threadsIo(host.pid, pick) });
  return {
    'runtime.main': thread((n) => n === 'MainThread' || n === 'node'), 'runtime.consumers': thread((n) => n === 'WorkerThread'),
    'runtime.other': thread((n) => !['MainThread', 'node', 'WorkerThread'].includes(n)),
    mariadb: () => ctx.mariadbPids, emulators: () => processTree(ctx.emulatorsPid), bench: () => [process.pid],
  };
}

/** One timed run of ours; `submit` drives the clients and returns the job ids. */
export async function oursRun(ctx: RunContext, host: OursHost, system: string, mode: RunFigures['mode'], plan: LoadPlan, submit: () => Promise<OursSubmission>): Promise<RunFigures> {
  const writes = await startMariadbWrites(ctx.admin);
  const cpu = startCpuMeter(oursCpuGroups(ctx, host));
  const { load, ids, submitWallMs } = await submit();
  await waitForOursIdle(ctx.admin, ctx.database);
  await waitForOutboxSettled(ctx.admin, ctx.database);
  const cpuPerJob = cpu.stop(plan.jobs);
  const dbWrites = await writes.stop();
  const submitPerSecond = plan.jobs / ((load.lastReturnedMs - load.firstSentMs) / 1000);
  const f = await oursFigures(ctx.admin, ctx.database, ids, { system, mode, submitPerSecond, offeredPerSecond: plan.ratePerSecond }, submitWallMs);
  f.cpuPerJob = cpuPerJob;
  f.ioPerJob = cpu.io(plan.jobs);
  f.dbWrites = dbWrites;
  const logged = [...host.takeLogCounts()].map(([message, n]) => `runtime log ${n}× ${message}`).join('; ');
  if (logged) f.note = logged;
  ctx.report(formatFigures(f));
  ctx.report(`  ${formatDbCost(system, cpuPerJob.mariadb, dbWrites, plan.jobs)}`);
  return f;
}

/** A run's database server CPU per job: the sum of the named groups of its CPU figures. */
export function dbServerCpuMs(f: RunFigures, servers: readonly string[]): number | undefined {
  return f.cpuPerJob ? servers.reduce((sum, s) => sum + (f.cpuPerJob![s] ?? 0), 0) : undefined;
}

/** One timed run of a peer; job i goes to user i % users.users of the group (a column of its rows, nothing more). */
export async function peerRun(ctx: RunContext, system: PeerSystem, workload: BenchWorkload, mode: RunFigures['mode'], plan: LoadPlan, runId: string, users: UserGroup): Promise<RunFigures> {
  if (!ctx.pg) throw new Error('peerRun: no PostgreSQL database');
  const { pool, serverPids } = ctx.pg;
  system.timings.started.clear();
  system.timings.done.clear();
  system.timings.created?.clear();
  await system.prepareUsers?.(Array.from({ length: users.users }, (_, u) => benchUserId(users.group, u)));
  const keys: string[] = [];
  const writes = await ctx.pg.writes.start();
  const servers = { postgres: serverPids, redis: () => pidsNamed('redis-server') };
  const cpu = startCpuMeter({ bench: () => [process.pid], ...Object.fromEntries(system.servers.map((s) => [s, servers[s]])), emulators: () => processTree(ctx.emulatorsPid) });
  const load = await offerLoad(plan, async (i) => {
    keys[i] = `${runId}-${i}`;
    await system.submit({ key: keys[i], runId, i, userId: benchUserId(users.group, i % users.users) });
  });
  await waitForDone(system.timings, plan.jobs);
  const cpuPerJob = cpu.stop(plan.jobs);
  const results = await resultCounts(pool, workload, runId);
  const dbWrites = await writes.stop(knownRows(system, plan.jobs, results.rows));
  const done = keys.map((k) => system.timings.done.get(k) ?? NaN);
  const f: RunFigures = {
    system: system.name, mode, jobs: plan.jobs, succeeded: results.jobs,
    jobsPerSecond: plan.jobs / ((Math.max(...done) - load.firstSentMs) / 1000),
    submitPerSecond: plan.jobs / ((load.lastReturnedMs - load.firstSentMs) / 1000), offeredPerSecond: plan.ratePerSecond,
    toStartMs: keys.map((k, i) => (system.timings.started.get(k) ?? NaN) - load.sentMs[i]!),
    toDoneMs: done.map((d, i) => d - load.sentMs[i]!),
    ...(system.timings.created ? { createdToStartMs: keys.map((k) => (system.timings.started.get(k) ?? NaN) - (system.timings.created!.get(k) ?? NaN)) } : {}),
    cpuPerJob, ioPerJob: cpu.io(plan.jobs), dbWrites,
  };
  ctx.report(formatFigures(f));
  ctx.report(`  ${formatDbCost(system.name, dbServerCpuMs(f, system.servers), dbWrites, plan.jobs)}${system.servers.length > 1 ? ` (server_cpu_ms: ${system.servers.join(' + ')})` : ''}`);
  return f;
}

/** Jobs with result rows, and those rows, of the run whose keys start with `runId-`. */
async function resultCounts(pool: pg.Pool, workload: BenchWorkload, runId: string): Promise<{ jobs: number; rows: number }> {
  const { rows: [row] } = await pool.query<{ jobs: string; rows: string }>(
    `SELECT COUNT(DISTINCT job_key) AS jobs, COUNT(*) AS rows FROM ${workload.resultTable} WHERE job_key LIKE $1`, [`${runId}-%`]);
  return { jobs: Number(row?.jobs ?? 0), rows: Number(row?.rows ?? 0) };
}

/** Rows `jobs` jobs of `system` are known to have written: its enqueue's and completion's, and the result rows. */
const knownRows = (system: PeerSystem, jobs: number, resultRows: number) => ({ inserted: jobs * system.rowsPerJob.inserted + resultRows, deleted: jobs * system.rowsPerJob.deleted });

/**
 * Untimed jobs through a peer before its first timed run (JIT compilation, first connections); their rows are
 * added to what the database counters must hold before the next reading.
 */
export async function warmPeer(ctx: RunContext, system: PeerSystem, workload: BenchWorkload, jobs: number, clients: number): Promise<void> {
  if (jobs <= 0 || !ctx.pg) return;
  system.timings.done.clear();
  const runId = `${system.name}-warmup`;
  await system.prepareUsers?.([runId]);
  await offerLoad({ jobs, clients }, (i) => system.submit({ key: `${runId}-${i}`, runId, i, userId: runId }));
  await waitForDone(system.timings, jobs);
  ctx.pg.writes.add(knownRows(system, jobs, (await resultCounts(ctx.pg.pool, workload, runId)).rows));
}
