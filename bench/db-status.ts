/**
 * `npm run bench:db-status`: what the database server does per job, as deltas of its own status counters over a
 * run of BENCH_JOBS (300) jobs of bench:peers' workload over HTTP (one user per job) on the runtime as
 * `npm start` starts it: statements by kind (Com_*), rows read by access path (Handler_read_*), rows written,
 * internal temporary tables (in memory and on disk), files opened, sorts, and InnoDB's row and log work. Counts,
 * not times: a change shows on a loaded machine where milliseconds drift. Also printed: the user and system CPU
 * per job of the server's process and of the runtime's (/proc; the server must run on this machine), and the
 * runtime's WARN-and-up log lines, counted (a realtime publish refused, say).
 *
 * Run it against a server nothing else uses (the counters are server-wide): BENCH_DB_URL (default
 * mysql://root@127.0.0.1:3399/aijobs_db_status; the database is created, migrated and dropped here).
 * BENCH_WARMUP (100) untimed jobs first; BENCH_DB_STATUS_MIN (0.05): counters under this per job are left out.
 */
import mysql from 'mysql2/promise';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { positiveNumber } from './peers/config.ts';
import { readFileSync } from 'node:fs';
import { startEmulators } from './peers/emulator-process.ts';
import { submitOverHttp } from './peers/http-clients.ts';
import { startOursHost } from './peers/ours.ts';
import { workloadFromEnv } from './peers/workload.ts';

const env = process.env;
const jobs = Math.floor(positiveNumber('BENCH_JOBS', 300));
const warmup = Math.floor(Number(env.BENCH_WARMUP ?? 100));
const clients = Math.floor(positiveNumber('BENCH_CLIENTS', 4));
const min = Number(env.BENCH_DB_STATUS_MIN ?? 0.05);
const url = env.BENCH_DB_URL ?? 'mysql://root@127.0.0.1:3399/aijobs_db_status';
const workload = workloadFromEnv();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const KEPT = /^(Com_(?!stmt_)|Handler_|Created_tmp|Sort_|Select_|Innodb_(rows|buffer_pool_read_requests|buffer_pool_write_requests|log_writes|data_fsyncs|data_writes|os_log_written)|Aria_|Opened_|Questions$|Bytes_received$)/;

async function status(admin: mysql.Connection): Promise<Map<string, number>> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>('SHOW GLOBAL STATUS');
  return new Map(rows.filter((r) => KEPT.test(String(r.Variable_name))).map((r) => [String(r.Variable_name), Number(r.Value)]));
}

const parsed = new URL(url);
const database = decodeURIComponent(parsed.pathname.slice(1));
if (!/^\w+$/.test(database)) throw new Error(`BENCH_DB_URL must name a database of letters, digits and _ (it is created and dropped here): ${parsed.protocol}//${parsed.host}${parsed.pathname}`);
const server = { host: parsed.hostname, port: Number(parsed.port || 3306), user: decodeURIComponent(parsed.username) };
const admin = await mysql.createConnection(server);
await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
await admin.query(`CREATE DATABASE \`${database}\``);
await migrateDatabase(url);
await admin.query(`USE \`${database}\``);
const emulators = await startEmulators();
const host = await startOursHost(url, emulators.endpoints);
const busy = async () => {
  const [[row]] = await admin.query<mysql.RowDataPacket[]>(
    "SELECT (SELECT COUNT(*) FROM AiJob WHERE lifecycleStatus IN ('queued', 'running')) + (SELECT COUNT(*) FROM OutboxEvent WHERE status IN ('pending', 'processing')) AS n");
  return Number(row?.n) > 0;
};
const settle = async () => { while (await busy()) await sleep(500); };
/** The server's user and system CPU (ms) and the runtime's, from /proc (the server must run on this machine). */
const [[pidRow]] = await admin.query<mysql.RowDataPacket[]>('SELECT @@pid_file AS f');
const serverPid = Number(readFileSync(String(pidRow?.f), 'utf8').trim());
const tick = 1000 / 100;
const cpu = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) * tick, sys: Number(fields[12]) * tick };
};
try {
  const tokens = await host.request<string[]>({ cmd: 'tokens', users: { group: 'dbstatus', users: warmup + jobs } });
  if (warmup > 0) await submitOverHttp(host.url, tokens.slice(0, warmup), { jobs: warmup, clients }, 'w', () => workload);
  await settle();
  const before = await status(admin);
  const cpuBefore = { server: cpu(serverPid), runtime: cpu(host.pid) };
  const start = Date.now();
  await submitOverHttp(host.url, tokens.slice(warmup), { jobs, clients }, 'r', () => workload);
  await settle();
  const seconds = (Date.now() - start) / 1000;
  const after = await status(admin);
  const cpuAfter = { server: cpu(serverPid), runtime: cpu(host.pid) };
  console.log(`db-status: workload=${workload.name} jobs=${jobs} warmup=${warmup} clients=${clients} seconds=${seconds.toFixed(1)} (per job; the poll of this bench included)`);
  for (const who of ['server', 'runtime'] as const) {
    const user = (cpuAfter[who].user - cpuBefore[who].user) / jobs;
    const sys = (cpuAfter[who].sys - cpuBefore[who].sys) / jobs;
    console.log(`cpu_ms_per_job ${who} user=${user.toFixed(2)} sys=${sys.toFixed(2)} total=${(user + sys).toFixed(2)}`);
  }
  for (const [line, count] of host.takeLogCounts()) if (!line.startsWith('text:')) console.log(`runtime log: ${count} × ${line}`);
  for (const [name, value] of after) {
    const perJob = (value - (before.get(name) ?? 0)) / jobs;
    if (perJob >= min) console.log(`${name.padEnd(40)} ${perJob.toFixed(2)}`);
  }
} finally {
  await host.stop();
  await emulators.stop();
  await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.end();
}
