/**
 * `npm run bench:statement-costs`: the database server's CPU for each statement a job sends, so a cut can be
 * priced before it is made. Three steps:
 *
 * 1. Capture: BENCH_JOBS (30) jobs of bench:peers' workload over HTTP (one user per job) on the runtime as
 *    `npm start` starts it, with MariaDB's general log on for the runtime's connections (./peers/statement-log.ts).
 * 2. Replay: a second, freshly migrated database receives every captured round trip again, in the log's order, on
 *    one connection, so each script meets the rows it met the first time.
 * 3. Measure: when the replay reaches the middle job's script of each path (./peers/statement-paths.ts: create,
 *    lock, capacity, project, …), it first runs `START TRANSACTION; <its first k statements>; ROLLBACK`
 *    BENCH_REPS (500) times for every k, in BENCH_ROUNDS (3) alternating rounds, and reads the server's CPU
 *    (/proc/<pid>/stat: the server must run on this machine) around each batch. A statement's cost is the least
 *    round of prefix k minus the least of prefix k − 1 (other work on the machine only ever adds): its parse,
 *    optimization, execution and undo, alone on a quiet server (no lock waits, no concurrency, the commit's redo
 *    write and fsync not included: each run rolls back).
 *
 * Run it against a server nothing else uses (the general log and the CPU are server-wide): BENCH_DB_URL (default
 * mysql://root@127.0.0.1:3399/aijobs_statement_costs; that database and `<it>_replay` are created and dropped
 * here). Figures move by ±10% between runs on a quiet machine; where the host steals CPU, single statements can even
 * come out negative: read the per-path totals there, and compare variants within one run or in alternate runs.
 */
import { readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { positiveNumber } from './peers/config.ts';
import { processCpuMs } from './peers/cpu.ts';
import { startEmulators } from './peers/emulator-process.ts';
import { submitOverHttp } from './peers/http-clients.ts';
import { startOursHost, waitForOursIdle, waitForOutboxSettled } from './peers/ours.ts';
import { withStatementLog } from './peers/statement-log.ts';
import { pathOfStatements, type EnginePath } from './peers/statement-paths.ts';
import { workloadFromEnv } from './peers/workload.ts';
import { splitStatements } from '../test/helpers/general-log.ts';

const env = process.env;
const jobs = Math.floor(positiveNumber('BENCH_JOBS', 30));
const reps = Math.floor(positiveNumber('BENCH_REPS', 500));
const rounds = Math.floor(positiveNumber('BENCH_ROUNDS', 3));
const clients = Math.floor(positiveNumber('BENCH_CLIENTS', 4));
const url = env.BENCH_DB_URL ?? 'mysql://root@127.0.0.1:3399/aijobs_statement_costs';
const workload = workloadFromEnv();

const parsed = new URL(url);
const database = decodeURIComponent(parsed.pathname.slice(1));
if (!/^\w+$/.test(database)) throw new Error(`BENCH_DB_URL must name a database of letters, digits and _ (it is created and dropped here): ${parsed.protocol}//${parsed.host}${parsed.pathname}`);
const replayDb = `${database}_replay`;
const server = { host: parsed.hostname, port: Number(parsed.port || 3306), user: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) };
const dbUrl = (db: string) => { const u = new URL(url); u.pathname = `/${db}`; return u.toString(); };

/** Statement text with its literals and numbers masked and whitespace collapsed: the same statement of every job. */
function statementShape(sql: string): string {
  return sql.replace(/'(?:[^'\\]|\\.)*'/g, "'…'").replace(/\b\d+(\.\d+)?\b/g, 'N').replace(/\s+/g, ' ').trim();
}

/** The least of the rounds: what else runs on the machine only ever adds to a batch's CPU. */
const least = (xs: number[]) => Math.min(...xs);

const admin = await mysql.createConnection({ ...server, multipleStatements: true });
for (const db of [database, replayDb]) {
  await admin.query(`DROP DATABASE IF EXISTS \`${db}\``);
  await admin.query(`CREATE DATABASE \`${db}\``);
  await migrateDatabase(dbUrl(db));
}
const [[pidRow]] = await admin.query<mysql.RowDataPacket[]>('SELECT @@pid_file AS f');
const serverPid = Number(readFileSync(String(pidRow?.f), 'utf8').trim());
const serverCpuMs = () => processCpuMs(serverPid) ?? Number.NaN;

const began = Date.now();
const emulators = await startEmulators();
let replay: mysql.Connection | undefined;
try {
  // 1. Capture.
  const window = await withStatementLog(admin, database, (user, password) => `mysql://${user}:${password}@${server.host}:${server.port}/${database}`,
    async (loggedUrl, marks) => {
      await marks.start();
      const host = await startOursHost(loggedUrl, emulators.endpoints);
      try {
        const tokens = await host.request<string[]>({ cmd: 'tokens', users: { group: 'stmtcost', users: jobs } });
        await submitOverHttp(host.url, tokens, { jobs, clients }, 'c', () => workload);
        await waitForOursIdle(admin, database);
        await waitForOutboxSettled(admin, database);
      } finally {
        await host.stop();
      }
      await marks.end();
    });
  console.error(`captured ${window.rows.length} log rows in ${((Date.now() - began) / 1000).toFixed(0)} s`);
  if (!window.complete) throw new Error('the general log was switched off during the capture; run again on a server nothing else uses');
  const trips = window.rows.filter((r) => r.command === 'Query').map((r) => splitStatements(r.argument.replaceAll(`\`${database}\`.`, `\`${replayDb}\`.`))
    .map((s) => s.trim()).filter((s) => s !== ''));

  // Which round trip of each path is measured: a whole transaction in one trip, the middle one of its path.
  const isScript = (t: string[]) => /^(START TRANSACTION|BEGIN)\b/i.test(t[0] ?? '') && /^COMMIT\b/i.test(t.at(-1) ?? '');
  const byPath = new Map<EnginePath | 'eager settle', number[]>();
  trips.forEach((t, i) => {
    const single = t.length === 1 && /^UPDATE `?OutboxEvent`? FORCE INDEX \(PRIMARY\) SET status = 'published'/.test(t[0]!);
    if (!isScript(t) && !single) return;
    const path = single ? 'eager settle' : pathOfStatements(t, replayDb);
    byPath.set(path, [...(byPath.get(path) ?? []), i]);
  });
  const measured = new Map<number, EnginePath | 'eager settle'>();
  for (const [path, at] of byPath) if (at.length >= jobs / 2) measured.set(at[Math.floor(at.length / 2)]!, path);

  // 2. Replay, 3. measure.
  replay = await mysql.createConnection({ ...server, database: replayDb, multipleStatements: true });
  const run = async (statements: string[], times = reps) => {
    const text = ['START TRANSACTION', ...statements, 'ROLLBACK'].join(';\n');
    const before = serverCpuMs();
    for (let i = 0; i < times; i += 1) await replay!.query(text);
    return ((serverCpuMs() - before) / times) * 1000;
  };
  const lines: string[] = [];
  let perJob = 0;
  let failed = 0;
  for (let i = 0; i < trips.length; i += 1) {
    const trip = trips[i]!;
    const path = measured.get(i);
    if (path) {
      const body = isScript(trip) ? trip.slice(1, -1) : trip;
      for (let k = 0; k <= body.length; k += 1) await run(body.slice(0, k), 20);
      const samples: number[][] = body.map(() => []);
      const empty: number[] = [];
      for (let r = 0; r < rounds; r += 1) {
        empty.push(await run([]));
        for (let k = 1; k <= body.length; k += 1) samples[k - 1]!.push(await run(body.slice(0, k)));
      }
      const totals = [least(empty), ...samples.map(least)];
      const share = byPath.get(path)!.length / jobs;
      const total = totals.at(-1)! - totals[0]!;
      perJob += total * share;
      lines.push(`${path}: ${total.toFixed(0)} µs a run, ${share.toFixed(2)} runs a job, ${body.length} statements, ${body.join(';').length} characters`);
      body.forEach((s, k) => lines.push(`  ${(totals[k + 1]! - totals[k]!).toFixed(0).padStart(6)} µs  ${String(s.length).padStart(5)} ch  ${statementShape(s).slice(0, 110)}`));
    }
    try {
      await replay.query(trip.join(';\n'));
    } catch {
      failed += 1; // as the first time: a guard that refused, a lost race; the transaction is rolled back
      await replay.query('ROLLBACK');
    }
  }
  console.log(`statement-costs: workload=${workload.name} jobs=${jobs} reps=${reps} rounds=${rounds} round_trips=${trips.length} failed_in_replay=${failed}`);
  console.log('server CPU per statement (least of the rounds, each prefix minus the one before; alone, rolled back):');
  for (const line of lines) console.log(line);
  console.log(`server_cpu_us_per_job=${perJob.toFixed(0)} (the measured scripts, weighted by runs a job)`);
} finally {
  await replay?.end();
  await emulators.stop();
  for (const db of [database, replayDb]) await admin.query(`DROP DATABASE IF EXISTS \`${db}\``);
  await admin.end();
}
