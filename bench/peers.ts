/**
 * `npm run bench:peers`: per-job cost of our engine against the queues our users would otherwise pick (issue 16).
 *
 * Workload, the same for every system: BENCH_JOBS jobs (1000) submitted by BENCH_CLIENTS concurrent clients (4);
 * each job calls the one shared OpenAI-compatible mock (no latency; fauxqs and the mock run in a child process,
 * bench/emulators.ts) with our feynman_evaluation prompt and writes one result row. Systems:
 * - `ours-http`: POST /api/ai/feynman-evaluations on the local runtime (local JWTs, 250 users); the projection
 *   writes the FeynmanEvaluation row. The runtime runs in a child process (bench/peers/ours-host.ts).
 * - `ours-inproc`: createJob (lib/jobs/create-job.ts, what the API route calls after its limit and credential
 *   checks) called in the runtime's process — no HTTP, JWT, limits or credential lookup — with the same
 *   dispatcher and consumers running.
 * - `graphile-worker` (PostgreSQL 127.0.0.1:5432, database aijobs_bench_peers, created and dropped here):
 *   business row + add_job in one transaction; the task writes its result row in the same database.
 * - `bullmq` (Redis 127.0.0.1:6379, own queue and prefix, obliterated after): queue.add; the worker writes its
 *   result row to the same PostgreSQL database. Peers run in this process (enqueue is a library call).
 * A peer whose server refuses connections is skipped (printed). Peer workers: BENCH_PEER_CONCURRENCY (10).
 *
 * Before its first timed run each system gets BENCH_WARMUP (300) untimed jobs (ours: through both ways in), so
 * no figure carries JIT compilation or first connections.
 * Each system runs unpaced (clients submit as fast as each submission returns) and paced (job i offered at
 * start + i / rate, rate = ours-http's unpaced submit rate, or BENCH_RATE). Order: ours-http unpaced, graphile-worker
 * unpaced and paced, ours-http paced, ours-inproc unpaced and paced, BullMQ unpaced and paced, then the
 * statement windows: each ratio's two runs back to back, as the machine's load drifts between runs.
 * Figures: jobs/s = jobs ÷ (first submission → last job done); submit→start and submit→done p50/p99; for ours also
 * `sent_ms` (summary: `sent`), created → the enqueue outbox row's publishedAt (SendMessageBatch returned), which
 * splits the hand-off into the API's side and the queue's and consumer's side.
 * Clocks — ours: submit = the job row's createdAt, start = startedAt, done = finishedAt, all from the runtime's
 * Node clock (ms, DATETIME(3)) and subtracted in SQL; createdAt is taken inside createJob, so for ours-http the
 * HTTP/JWT/limit work before it is in jobs/s but not in submit→start. Peers: submit = client Node clock just
 * before the enqueue call, start = handler entry, done = after the result INSERT returned (sub-ms Node clock,
 * same process).
 *
 * Ours only — statements per job by path: a separate window of BENCH_LOG_JOBS (200) jobs per way in, with
 * MariaDB's general log on (table output, shared under the tests' holder protocol) and the runtime connected
 * as a user of its own; each transaction or autocommit statement is classified by the SQL it sends
 * (bench/peers/statement-paths.ts); the window closes once the jobs are done and their terminal events are
 * published (the scheduled dispatcher, every 2 s). Handler_commit per job is the SHOW GLOBAL STATUS delta over each timed run
 * (server-wide: other clients of the server inflate it).
 *
 * CPU per job (bench/peers/cpu.ts): every timed run also prints `cpu_ms_per_job`, the user + system CPU of each
 * process taking part divided by the jobs (/proc; ours: the runtime's main thread, its consumer thread, its
 * other threads (V8's GC and compiler helpers), MariaDB, the emulators, the bench's clients; a peer: this
 * process (its library and clients), PostgreSQL, Redis, the emulators). On this saturated 2-core machine
 * jobs/s swings with whatever else runs, CPU per job much less; `cpu_per_job_ratio` (graphile-worker's total ÷
 * ours-http's, unpaced) is what peer_ratio tends to when both saturate the machine.
 * The clients of ours-http use node:http on a keep-alive agent (fetch cost them over twice the CPU).
 * Under each run's summary line: `rw_syscalls_per_job` (read/write-family system calls, /proc/<pid>/io; MariaDB
 * and PostgreSQL answer with send/recv, which it does not count) and `ctx_switches_per_job` (voluntary +
 * involuntary, every thread) by process group. They do not drift with the neighbours' load as CPU does, so
 * they show a cut of one round trip or one thread hand-off that the CPU figures hide in their noise.
 *
 * BENCH_CPU_PROF=<dir>: CPU profile (node:inspector, in the runtime's process) of the ours-http unpaced run,
 * written to <dir>/ours-http-unpaced-<time>.cpuprofile; read it with `npm run bench:profile-top -- <file>`.
 * BENCH_CPU_PROF_HOST=<dir>: `--cpu-prof` for the whole runtime process, a profile per thread (the consumer
 * thread's included) written when it exits. BENCH_HOST_NODE_FLAGS: extra node flags for the runtime and the
 * emulators (experiments, e.g. `--single-threaded-gc`; start this script with the same flags to treat the
 * peers alike).
 * One run at a time: a second run drops and recreates the databases under the first (its creates then fail).
 * Env: DATABASE_URL (MariaDB server), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432), BENCH_REDIS (127.0.0.1:6379).
 * BENCH_ROUNDS=<n> (5): the peer_ratio pair and the handoff pair n times, alternating as above, each round paced at
 * its own ours-http unpaced submit rate; a `rounds=` line lists each round's figures (with
 * `paced_kept_up_by_round`: the paced round's accepted ÷ offered rate) and the last two lines give their
 * medians. ours-inproc and BullMQ run once, after the rounds.
 * BENCH_SWEEP=<fractions> (e.g. 0.5,0.7,0.85,1): after the rounds, ours-http and graphile-worker each paced at
 * those fractions of its own median unpaced submit rate; a `load_sweep` line per fraction compares the two
 * hand-offs at the same share of each one's capacity (see {@link loadSweep}).
 * Last two lines: peer_ratio=<ours-http jobs/s ÷ graphile-worker jobs/s> and handoff_p50_ms=<ours-http paced,
 * createdAt → startedAt p50> (medians over the rounds).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../lib/db/database-url.ts';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { formatFigures, offerLoad, percentile, type LoadPlan, type RunFigures } from './peers/load.ts';
import { globalStatus, hostNodeFlags, oursFigures, startOursHost, submitOverHttp, waitForOutboxSettled, waitForOursIdle } from './peers/ours.ts';
import { withStatementLog } from './peers/statement-log.ts';
import { formatCpu, formatIo, pidsNamed, startCpuMeter, threadsCpuMs, threadsIo } from './peers/cpu.ts';
import { classifyLogRows, PATH_NOTES, PATHS, type PathReport } from './peers/statement-paths.ts';
import { dropPostgresDatabase, onPostgresServer, PEER_TABLES_SQL, waitForDone } from './peers/peer-task.ts';
import type { PeerSystem } from './peers/peer-system.ts';
import { startGraphilePeer } from './peers/graphile-peer.ts';
import { startBullmqPeer } from './peers/bullmq-peer.ts';

const env = process.env;
const jobs = Number(env.BENCH_JOBS ?? 1000);
const clients = Number(env.BENCH_CLIENTS ?? 4);
const peerConcurrency = Number(env.BENCH_PEER_CONCURRENCY ?? 10);
const logJobs = Number(env.BENCH_LOG_JOBS ?? 200);
const warmupJobs = Number(env.BENCH_WARMUP ?? 300);
const sweepFractions = (env.BENCH_SWEEP ?? '').split(',').filter((v) => v.trim() !== '').map((v) => {
  const fraction = Number(v);
  if (!(fraction > 0 && fraction <= 2)) throw new Error(`BENCH_SWEEP: ${JSON.stringify(v)} is not a fraction in (0, 2]; expected e.g. 0.5,0.7,0.85,1`);
  return fraction;
});
const USERS = 250;
const DB = 'aijobs_bench_peers';
const pgBase = (env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const [redisHost = '127.0.0.1', redisPort = '6379'] = (env.BENCH_REDIS ?? '127.0.0.1:6379').split(':');

const serverUrl = databaseUrlFromEnv();
const url = withDatabase(serverUrl, DB);
const s = parseDatabaseUrl(url);
const admin = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password, multipleStatements: true });
await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
await migrateDatabase(url);
const emulators = spawn(process.execPath, [...hostNodeFlags(), '--import', 'tsx', fileURLToPath(new URL('./emulators.ts', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
const endpoints = JSON.parse((await once(createInterface({ input: emulators.stdout! }), 'line'))[0] as string) as { sqsEndpoint: string; mockAiUrl: string };
const report = (line: string) => console.log(line);
report(`peers bench: jobs=${jobs} clients=${clients} peer_concurrency=${peerConcurrency} log_jobs=${logJobs} (${new Date().toISOString()})`);

// ---- setup: our runtime host, the peers' PostgreSQL database ----------------------------------------------
const host = await startOursHost(`${url}?connectionLimit=20`, endpoints);
const tokens = await host.request<string[]>({ cmd: 'tokens', users: USERS });
const pgUp = await portOpen(new URL(pgBase).hostname, Number(new URL(pgBase).port || 5432));
const pgUrl = `${pgBase}/${DB}`;
let results: pg.Pool | undefined;
if (pgUp) {
  await dropPostgresDatabase(pg.Client, pgBase, DB);
  await onPostgresServer(pg.Client, pgBase, `CREATE DATABASE ${DB}`);
  results = new pg.Pool({ connectionString: pgUrl, max: 2 });
  results.on('error', (err) => console.error(`peer results pool: ${err.message}`));
  await results.query(PEER_TABLES_SQL);
}

/** One timed run of ours; `submit` drives the clients and returns the job ids. */
async function oursRun(system: string, mode: RunFigures['mode'], plan: LoadPlan, submit: () => Promise<{ load: { firstSentMs: number; lastReturnedMs: number }; ids: string[] }>) {
  const commitsBefore = await globalStatus(admin, 'Handler_commit');
  const thread = (pick: (name: string) => boolean) => ({ readMs: () => threadsCpuMs(host.pid, pick) ?? 0, readIo: () => threadsIo(host.pid, pick) });
  const cpu = startCpuMeter({
    'runtime.main': thread((n) => n === 'MainThread' || n === 'node'), 'runtime.consumers': thread((n) => n === 'WorkerThread'),
    'runtime.other': thread((n) => !['MainThread', 'node', 'WorkerThread'].includes(n)), mariadb: () => pidsNamed('mariadbd'), emulators: () => [emulators.pid!], bench: () => [process.pid] });
  const { load, ids } = await submit();
  await waitForOursIdle(admin, DB);
  const cpuPerJob = cpu.stop(plan.jobs);
  const commitsPerJob = (await globalStatus(admin, 'Handler_commit') - commitsBefore) / plan.jobs;
  const submitPerSecond = plan.jobs / ((load.lastReturnedMs - load.firstSentMs) / 1000);
  const f = await oursFigures(admin, DB, ids, { system, mode, submitPerSecond, offeredPerSecond: plan.ratePerSecond });
  f.cpuPerJob = cpuPerJob;
  f.ioPerJob = cpu.io(plan.jobs);
  const logged = [...host.takeLogCounts()].map(([message, n]) => `; runtime log ${n}× ${message}`).join('');
  f.note = `Handler_commit/job=${commitsPerJob.toFixed(1)} server-wide${logged}`;
  report(formatFigures(f));
  await waitForOutboxSettled(admin, DB);
  return f;
}

const http = (plan: LoadPlan, runId: string) => () => submitOverHttp(host, tokens, plan, runId);
const inproc = (plan: LoadPlan, runId: string) => () => host.request<{ load: { firstSentMs: number; lastReturnedMs: number }; ids: string[] }>({ cmd: 'inproc', plan, runId, users: USERS });

async function peerRun(system: PeerSystem, results: pg.Pool, mode: RunFigures['mode'], plan: LoadPlan, tag = ''): Promise<RunFigures> {
  system.timings.started.clear();
  system.timings.done.clear();
  const runId = `${system.name}-${mode}${tag}`;
  const keys: string[] = [];
  const cpu = startCpuMeter({ bench: () => [process.pid], postgres: () => pidsNamed('postgres'), redis: () => pidsNamed('redis-server'), emulators: () => [emulators.pid!] });
  const load = await offerLoad(plan, async (i) => {
    keys[i] = `${runId}-${i}`;
    await system.submit({ key: keys[i], runId, i });
  });
  await waitForDone(system.timings, plan.jobs);
  const cpuPerJob = cpu.stop(plan.jobs);
  const { rows: [row] } = await results.query<{ n: string }>('SELECT COUNT(*) AS n FROM peer_result WHERE job_key LIKE $1', [`${runId}-%`]);
  const done = keys.map((k) => system.timings.done.get(k) ?? NaN);
  const f: RunFigures = {
    system: system.name, mode, jobs: plan.jobs, succeeded: Number(row?.n ?? 0),
    jobsPerSecond: plan.jobs / ((Math.max(...done) - load.firstSentMs) / 1000),
    submitPerSecond: plan.jobs / ((load.lastReturnedMs - load.firstSentMs) / 1000), offeredPerSecond: plan.ratePerSecond,
    toStartMs: keys.map((k, i) => (system.timings.started.get(k) ?? NaN) - load.sentMs[i]!),
    toDoneMs: done.map((d, i) => d - load.sentMs[i]!),
    cpuPerJob,
    ioPerJob: cpu.io(plan.jobs),
  };
  report(formatFigures(f));
  return f;
}

/**
 * Warm-up, untimed, the same for every system: `warmupJobs` jobs through each way in before its first timed
 * run, so no system's figures carry its JIT compilation and first connections (ours ran first and paid it alone).
 */
async function warmOurs(): Promise<void> {
  if (warmupJobs <= 0) return;
  const plan = { jobs: warmupJobs, clients };
  await submitOverHttp(host, tokens, plan, 'wh');
  await host.request({ cmd: 'inproc', plan, runId: 'wi', users: USERS });
  await waitForOursIdle(admin, DB);
  await waitForOutboxSettled(admin, DB);
}

async function warmPeer(system: PeerSystem): Promise<void> {
  if (warmupJobs <= 0) return;
  system.timings.done.clear();
  await offerLoad({ jobs: warmupJobs, clients }, (i) => system.submit({ key: `${system.name}-warmup-${i}`, runId: `${system.name}-warmup`, i }));
  await waitForDone(system.timings, warmupJobs);
}

function portOpen(hostName: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostName, port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

// ---- timed runs: ours-http unpaced and graphile-worker unpaced back to back (the peer_ratio pair), then
// graphile-worker and ours-http paced (the handoff pair), so the shared machine's load drifts least between them;
 // BENCH_ROUNDS times (default 5), each round paced at its own ours-http unpaced submit rate.
const figures: RunFigures[] = [];
const median = (values: number[]) => percentile(values, 50);
const unpaced: LoadPlan = { jobs, clients };
const profileDir = env.BENCH_CPU_PROF;
const rounds = Math.max(1, Math.floor(Number(env.BENCH_ROUNDS ?? 5)));
await warmOurs();
const graphile = results ? await startGraphilePeer({ databaseUrl: pgUrl, mockAiUrl: endpoints.mockAiUrl, concurrency: peerConcurrency, clients }) : undefined;
if (graphile) await warmPeer(graphile);
else report(`graphile-worker: skipped (PostgreSQL at ${pgBase} refused the connection)`);
const roundFigures: { httpUnpaced: RunFigures; httpPaced: RunFigures; graphileUnpaced?: RunFigures | undefined }[] = [];
let paced: LoadPlan = unpaced;
for (let r = 0; r < rounds; r += 1) {
  const tag = rounds > 1 ? `-r${r + 1}` : '';
  if (profileDir && r === 0) await host.request({ cmd: 'profile-start' });
  const httpUnpaced = await oursRun('ours-http', 'unpaced', unpaced, http(unpaced, `hu${tag}`));
  if (profileDir && r === 0) {
    await mkdir(profileDir, { recursive: true });
    const file = await host.request<string>({ cmd: 'profile-stop', file: join(profileDir, `ours-http-unpaced-${Date.now()}.cpuprofile`) });
    report(`cpu profile (runtime process, ours-http unpaced): ${file}`);
  }
  paced = { jobs, clients, ratePerSecond: Number(env.BENCH_RATE) || httpUnpaced.submitPerSecond };
  const graphileUnpaced = graphile && results ? await peerRun(graphile, results, 'unpaced', unpaced, tag) : undefined;
  if (graphile && results) figures.push(graphileUnpaced!, await peerRun(graphile, results, 'paced', paced, tag));
  const httpPaced = await oursRun('ours-http', 'paced', paced, http(paced, `hp${tag}`));
  figures.push(httpUnpaced, httpPaced);
  roundFigures.push({ httpUnpaced, httpPaced, graphileUnpaced });
}
const sweep = await loadSweep();
await graphile?.stop();
figures.push(
  await oursRun('ours-inproc', 'unpaced', unpaced, inproc(unpaced, 'iu')),
  await oursRun('ours-inproc', 'paced', paced, inproc(paced, 'ip')));
await host.stop();
if (!results) report('bullmq: skipped (its result rows go to PostgreSQL, which is absent)');
else if (await portOpen(redisHost, Number(redisPort))) {
  const bull = await startBullmqPeer({ databaseUrl: pgUrl, mockAiUrl: endpoints.mockAiUrl, redis: { host: redisHost, port: Number(redisPort) }, concurrency: peerConcurrency });
  await warmPeer(bull);
  figures.push(await peerRun(bull, results, 'unpaced', unpaced), await peerRun(bull, results, 'paced', paced));
  await bull.stop();
} else report(`bullmq: skipped (Redis at ${redisHost}:${redisPort} refused the connection)`);
if (results) {
  await results.end();
  await dropPostgresDatabase(pg.Client, pgBase, DB);
}

/**
 * The BENCH_SWEEP runs. Why: the rounds pace both systems at ours-http's rate, which is ours at saturation and
 * graphile-worker at about peer_ratio of its own capacity; here each is paced at shares of its own.
 */
async function loadSweep(): Promise<string[]> {
  const lines: string[] = [];
  if (sweepFractions.length === 0) return lines;
  const oursRate = median(roundFigures.map((r) => r.httpUnpaced.submitPerSecond));
  const peerRates = roundFigures.filter((r) => r.graphileUnpaced).map((r) => r.graphileUnpaced!.submitPerSecond);
  const peerRate = peerRates.length > 0 ? median(peerRates) : NaN;
  for (const [k, fraction] of sweepFractions.entries()) {
    const plan = { jobs, clients, ratePerSecond: fraction * oursRate };
    const ours = await oursRun('ours-http', 'paced', plan, http(plan, `sw${k}`));
    const peer = graphile && results && Number.isFinite(peerRate)
      ? await peerRun(graphile, results, 'paced', { jobs, clients, ratePerSecond: fraction * peerRate }, `-sw${k}`) : undefined;
    const p50 = (values: number[] | undefined) => (values ? percentile(values, 50).toFixed(1) : 'n/a');
    lines.push(`load_sweep fraction=${fraction} ours_rate=${(fraction * oursRate).toFixed(1)} ours_handoff_p50_ms=${p50(ours.toStartMs)}`
      + ` ours_sent_p50_ms=${p50(ours.toSentMs)} graphile_rate=${(fraction * peerRate).toFixed(1)} graphile_start_p50_ms=${p50(peer?.toStartMs)}`);
  }
  return lines;
}

// ---- ours: statements per job, from the general log --------------------------------------------------------
async function loggedWindow(way: 'http' | 'inproc'): Promise<{ report: PathReport; complete: boolean }> {
  const window = await withStatementLog(admin, DB, (user, password) => `mysql://${user}:${password}@${s.host}:${s.port}/${DB}?connectionLimit=20`,
    async (loggedUrl, marks) => {
      const logged = await startOursHost(loggedUrl, endpoints);
      try {
        const plan = { jobs: logJobs, clients };
        const loggedTokens = way === 'http' ? await logged.request<string[]>({ cmd: 'tokens', users: USERS }) : [];
        await marks.start();
        if (way === 'http') await submitOverHttp(logged, loggedTokens, plan, 'lh');
        else await logged.request({ cmd: 'inproc', plan, runId: 'li', users: USERS });
        await waitForOursIdle(admin, DB);
        await waitForOutboxSettled(admin, DB);
        await marks.end();
      } finally {
        await logged.stop();
      }
    });
  const classified = classifyLogRows(window.rows, DB);
  if (env.BENCH_SQL_DUMP) await writeFile(`${env.BENCH_SQL_DUMP}.${way}`, classified.units.map((u) => `${u.path}\t${u.sql}`).join('\n'));
  return { report: classified, complete: window.complete };
}

function printPaths(way: string, r: { report: PathReport; complete: boolean }) {
  const per = (n: number) => (n / logJobs).toFixed(2).padStart(8);
  report(`ours-${way} statements per job by path (general log, ${logJobs} jobs${r.complete ? '' : ', INCOMPLETE: the log was switched off during the window'}):`);
  report(`  ${'path'.padEnd(10)} ${'write_tx'.padStart(8)} ${'read_tx'.padStart(8)} ${'stmts'.padStart(8)} ${'trips'.padStart(8)}  what`);
  const total = { writeTransactions: 0, readUnits: 0, statements: 0, roundTrips: 0 };
  for (const path of PATHS) {
    const c = r.report.counts[path];
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += c[k];
    report(`  ${path.padEnd(10)} ${per(c.writeTransactions)} ${per(c.readUnits)} ${per(c.statements)} ${per(c.roundTrips)}  ${PATH_NOTES[path]}`);
  }
  report(`  ${'total'.padEnd(10)} ${per(total.writeTransactions)} ${per(total.readUnits)} ${per(total.statements)} ${per(total.roundTrips)}`);
}

if (logJobs > 0) for (const way of ['http', 'inproc'] as const) printPaths(way, await loggedWindow(way));

emulators.kill('SIGTERM');
await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
await admin.end();

// ---- summary ----------------------------------------------------------------------------------------------
report('summary (jobs/s; start and done p50 ms):');
for (const f of figures) {
  const sent = f.toSentMs ? ` (sent ${percentile(f.toSentMs, 50).toFixed(1)})` : '';
  report(`  ${f.system.padEnd(16)} ${f.mode.padEnd(7)} ${f.jobsPerSecond.toFixed(1).padStart(7)}  start ${percentile(f.toStartMs, 50).toFixed(1).padStart(7)}${sent}  done ${percentile(f.toDoneMs, 50).toFixed(1).padStart(7)}  ${f.cpuPerJob ? formatCpu(f.cpuPerJob) : ''}`);
  const io = f.ioPerJob ? formatIo(f.ioPerJob) : '';
  if (io) report(`  ${''.padEnd(16)} ${''.padEnd(7)} ${io}`);
}
for (const line of sweep) report(line);
const cpuTotal = (f?: RunFigures) => (f?.cpuPerJob ? Object.values(f.cpuPerJob).reduce((a, b) => a + b, 0) : 0);
const ratios = roundFigures.filter((r) => r.graphileUnpaced).map((r) => r.httpUnpaced.jobsPerSecond / r.graphileUnpaced!.jobsPerSecond);
const cpuRatios = roundFigures.filter((r) => cpuTotal(r.graphileUnpaced) > 0 && cpuTotal(r.httpUnpaced) > 0)
  .map((r) => cpuTotal(r.graphileUnpaced) / cpuTotal(r.httpUnpaced));
const handoffs = roundFigures.map((r) => percentile(r.httpPaced.toStartMs, 50));
// Whether a paced round kept up with the rate it was offered (its round's unpaced rate): creates accepted per
// second ÷ offered. Below about 0.9 the machine was slower than when the rate was measured, and that round's
// hand-off includes a backlog.
const keptUp = roundFigures.map((r) => r.httpPaced.submitPerSecond / (r.httpPaced.offeredPerSecond ?? r.httpPaced.submitPerSecond));
if (rounds > 1) {
  // One figure per round, then the medians below: on this shared machine single runs drift by a third.
  console.log(`rounds=${rounds} peer_ratio_by_round=${ratios.map((v) => v.toFixed(2)).join(',') || 'n/a'} handoff_p50_ms_by_round=${handoffs.map((v) => v.toFixed(1)).join(',')} paced_kept_up_by_round=${keptUp.map((v) => v.toFixed(2)).join(',')}`);
}
if (cpuRatios.length > 0) {
  // What peer_ratio tends to on a machine the bench saturates, with less run-to-run noise: CPU per job is
  // what the two cores are shared by.
  const last = roundFigures.at(-1)!;
  console.log(`cpu_per_job_ratio=${median(cpuRatios).toFixed(2)} (graphile-worker ${cpuTotal(last.graphileUnpaced).toFixed(2)} ms ÷ ours-http ${cpuTotal(last.httpUnpaced).toFixed(2)} ms, unpaced${rounds > 1 ? ', last round; ratio: median of the rounds' : ''})`);
}
console.log(`peer_ratio=${ratios.length > 0 ? median(ratios).toFixed(2) : 'n/a'}`);
console.log(`handoff_p50_ms=${median(handoffs).toFixed(1)}`);
