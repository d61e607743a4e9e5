/**
 * `npm run bench:db-cost`: the database server's work per job as instructions executed (Valgrind's callgrind), ours
 * against graphile-worker — a count, not a time, so a change of a few percent shows on a loaded machine where
 * `bench:peers`' server CPU milliseconds drift by more than that between runs.
 *
 * Each system gets a private server started here under callgrind (./db-cost/callgrind-server.ts): ours a MariaDB,
 * graphile-worker a PostgreSQL. The workload is bench:peers' (bench/peers/workload.ts, BENCH_WORKLOAD: quiz with
 * `count: 2` by default), ours over HTTP on the runtime as `npm start` starts it with one user per job
 * (bench/peers/ours-host.ts), graphile-worker's enqueue and task as in bench:peers (bench/peers/graphile-peer.ts).
 * Per system: BENCH_WARMUP (50) untimed jobs, then an idle window of BENCH_DB_COST_IDLE_MS (10000) with nothing
 * submitted (the scheduled work and pollers alone), then BENCH_DB_COST_JOBS (200) jobs from BENCH_CLIENTS (4)
 * clients, the window closing once every job is done (ours: and its outbox rows are settled). Instructions per
 * job = (the jobs' window − the idle window's rate × its length) ÷ jobs; the raw figure is printed too.
 * Under Valgrind the server runs ~50× slower, so the idle rate is a large share of the raw window: both scale
 * with the wall time, which this subtraction removes.
 *
 * Last lines: `db_cost <system> instructions_per_job=…`, then `db_instr_ratio=<ours ÷ graphile-worker>`, and the
 * top BENCH_DB_COST_TOP (15) functions of MariaDB by self cost in the jobs' window (callgrind_annotate).
 * BENCH_DB_COST_PEER=off skips graphile-worker. Needs valgrind, mariadbd and mariadb-install-db; PostgreSQL's
 * initdb and postgres for the peer.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { startMariadbUnderCallgrind, startPostgresUnderCallgrind, type CallgrindServer } from './db-cost/callgrind-server.ts';
import { positiveNumber } from './peers/config.ts';
import { startEmulators } from './peers/emulator-process.ts';
import { startGraphilePeer } from './peers/graphile-peer.ts';
import { submitOverHttp } from './peers/http-clients.ts';
import { offerLoad } from './peers/load.ts';
import { startOursHost } from './peers/ours.ts';
import { onPostgresServer, peerTablesSql, waitForDone } from './peers/peer-task.ts';
import { workloadFromEnv } from './peers/workload.ts';

const env = process.env;
const jobs = Math.floor(positiveNumber('BENCH_DB_COST_JOBS', 200));
const warmup = Math.floor(Number(env.BENCH_WARMUP ?? 50));
const clients = Math.floor(positiveNumber('BENCH_CLIENTS', 4));
const idleMs = positiveNumber('BENCH_DB_COST_IDLE_MS', 10_000);
const top = Math.floor(positiveNumber('BENCH_DB_COST_TOP', 15));
const workload = workloadFromEnv();
const DB = 'aijobs_db_cost';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface WindowCost { perJob: number; rawPerJob: number; idlePerSecond: number; seconds: number; files: string[] }

/** The idle window, then the jobs' window (`runJobs` resolves once they are done); see the module comment. */
async function measure(server: CallgrindServer, idle: () => Promise<void>, runJobs: () => Promise<void>): Promise<WindowCost> {
  await server.zero();
  const idleStart = Date.now();
  await idle();
  const idleSeconds = (Date.now() - idleStart) / 1000;
  const idleCost = await server.dump();
  await server.zero();
  const start = Date.now();
  await runJobs();
  const seconds = (Date.now() - start) / 1000;
  const run = await server.dump();
  const idlePerSecond = idleCost.instructions / idleSeconds;
  return { perJob: (run.instructions - idlePerSecond * seconds) / jobs, rawPerJob: run.instructions / jobs, idlePerSecond, seconds, files: run.files };
}

const M = (n: number) => (n / 1e6).toFixed(2);
const line = (system: string, c: WindowCost) => `db_cost ${system} instructions_per_job=${M(c.perJob)}M (window ${M(c.rawPerJob)}M per job over ${c.seconds.toFixed(1)} s,`
  + ` idle ${M(c.idlePerSecond)}M/s subtracted) jobs=${jobs}`;

/** Ours: one user per job over HTTP; done = no job queued or running and no outbox row pending (polled each second). */
async function ours(endpoints: object): Promise<{ cost: WindowCost; topLines: string[] }> {
  const server = await startMariadbUnderCallgrind();
  const url = `mysql://root@127.0.0.1:${server.port}/${DB}`;
  try {
    await migrateDatabase(url);
    const host = await startOursHost(url, endpoints);
    const admin = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'root', database: DB });
    const busy = async () => {
      const [[row]] = await admin.query<mysql.RowDataPacket[]>(
        "SELECT (SELECT COUNT(*) FROM AiJob WHERE lifecycleStatus IN ('queued', 'running')) + (SELECT COUNT(*) FROM OutboxEvent WHERE status IN ('pending', 'processing')) AS n");
      return Number(row?.n) > 0;
    };
    const settle = async () => {
      while (await busy()) await sleep(1000);
    };
    try {
      const tokens = await host.request<string[]>({ cmd: 'tokens', users: { group: 'dbcost', users: warmup + jobs } });
      if (warmup > 0) await submitOverHttp(host.url, tokens.slice(0, warmup), { jobs: warmup, clients }, 'w', () => workload);
      await settle();
      const cost = await measure(server, async () => {
        for (const end = Date.now() + idleMs; Date.now() < end;) {
          await busy();
          await sleep(1000);
        }
      }, async () => {
        await submitOverHttp(host.url, tokens.slice(warmup), { jobs, clients }, 'r', () => workload);
        await settle();
      });
      return { cost, topLines: await server.topFunctions(cost.files, top) };
    } finally {
      await admin.end();
      await host.stop();
    }
  } finally {
    await server.stop();
  }
}

/** graphile-worker: its enqueue (business row + add_job in one transaction) and task, as in bench:peers. */
async function graphile(mockAiUrl: string): Promise<WindowCost> {
  const server = await startPostgresUnderCallgrind();
  const base = `postgres://postgres@127.0.0.1:${server.port}`;
  try {
    await onPostgresServer(pg.Client, base, `CREATE DATABASE ${DB}`);
    const setup = new pg.Client({ connectionString: `${base}/${DB}` });
    await setup.connect();
    await setup.query(peerTablesSql(workload));
    await setup.end();
    const peer = await startGraphilePeer({ databaseUrl: `${base}/${DB}`, mockAiUrl, workload, concurrency: 10, clients });
    try {
      const batch = async (runId: string, n: number) => {
        peer.timings.done.clear();
        await offerLoad({ jobs: n, clients }, (i) => peer.submit({ key: `${runId}-${i}`, runId, i, userId: `${runId}-${i}` }));
        await waitForDone(peer.timings, n, 1_800_000);
      };
      if (warmup > 0) await batch('w', warmup);
      return await measure(server, async () => { await sleep(idleMs); }, () => batch('r', jobs));
    } finally {
      await peer.stop();
    }
  } finally {
    await server.stop();
  }
}

const emulators = await startEmulators();
try {
  console.log(`db-cost bench: workload=${workload.name} jobs=${jobs} warmup=${warmup} clients=${clients} idle_ms=${idleMs} (${new Date().toISOString()})`);
  const mine = await ours(emulators.endpoints);
  console.log(line('ours-http', mine.cost));
  const peer = env.BENCH_DB_COST_PEER === 'off' ? undefined : await graphile(emulators.endpoints.mockAiUrl);
  if (peer) console.log(line('graphile-worker', peer));
  console.log(`MariaDB top ${top} functions by self cost (jobs' window, before the idle subtraction):`);
  mine.topLines.forEach((l) => console.log(`  ${l}`));
  if (peer) console.log(`db_instr_ratio=${(mine.cost.perJob / peer.perJob).toFixed(2)}`);
} finally {
  await emulators.stop();
}
