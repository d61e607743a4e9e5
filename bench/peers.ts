/**
 * `npm run bench:peers`: per-job cost of our engine against the queues our users would otherwise pick.
 *
 * Workload, the same for every system (bench/peers/workload.ts, BENCH_WORKLOAD): quiz_generation with
 * `count: 2` (default; `feynman` for feynman_evaluation). BENCH_JOBS jobs (1000) per run, submitted by
 * BENCH_CLIENTS concurrent clients (4); each job calls the one shared OpenAI-compatible mock (no latency) with
 * our prompt and writes its result rows (ours: the projection's QuizQuestion rows; a peer: rows of the same
 * shape in PostgreSQL). fauxqs, the mock, the realtime hub and moto_server (when installed) run in a child process
 * (bench/emulators.ts; fauxqs and the mock each on a thread of their own). Systems:
 * - `ours-http`: POST to the job type's collection on the local runtime, one user per job (each run a fresh set
 *   of users, so no token, limit or usage row of an earlier run is reused), local JWTs. The runtime runs in a
 *   child process started as `npm start` starts it, except that fauxqs and the mock are not in its process
 *   (bench/peers/ours-host.ts says why). `ours-http-few`: the same with BENCH_FEW_USERS users (250), job i as
 *   user i % 250, the same users and tokens in every run.
 * - `ours-inproc`: createJob (lib/jobs/create-job.ts, what the API route calls after its limit and credential
 *   checks) called in the runtime's process — no HTTP, JWT, limits or credential lookup — the few users.
 * - `graphile-worker` (PostgreSQL 127.0.0.1:5432, database aijobs_bench_peers, created and dropped here):
 *   business row + add_job in one transaction; the task writes its result rows in the same database.
 * - `graphile-worker-kept` (database aijobs_bench_peers_kept on the same server): graphile-worker whose enqueue and
 *   task write, transaction for transaction, the rows ours writes for its guarantees (bench/peers/graphile-kept-peer.ts):
 *   what the database costs per job once a peer keeps them. Its clients submit over HTTP, as ours' do, to an API in
 *   the peer's process that checks the token and the input first (bench/peers/http-front.ts), and it pushes its
 *   status changes and answer to the realtime hub with ours' publisher. BENCH_KEPT=0 skips it.
 * - `bullmq` (Redis 127.0.0.1:6379, own queue and prefix, obliterated after): queue.add; the worker writes its
 *   result rows to the same PostgreSQL database. Peers run in this process (enqueue is a library call).
 * A peer whose server refuses connections is skipped (printed). Peer workers: BENCH_PEER_CONCURRENCY (10).
 *
 * Before its first timed run each way in gets BENCH_WARMUP (300) untimed jobs, so no figure carries JIT
 * compilation or first connections. Each run is unpaced (clients submit as fast as each submission returns)
 * or paced at BENCH_SHARE (0.8) of the same system's throughput (jobs/s) in its unpaced run just before (in the
 * same round; job i offered at start + i / rate). A round, BENCH_ROUNDS times (5): ours-http unpaced, graphile-worker unpaced, ours-http-few
 * unpaced, ours-http paced, graphile-worker paced, `ours-http-load` (ours-http paced to keep the machine as busy as
 * graphile-worker's paced run did; BENCH_SAME_LOAD=0 skips it), graphile-worker-kept unpaced and paced, then
 * `ours-http-kload` (the same at graphile-worker-kept's load), then the round's statement window (below); the runs a ratio
 * divides sit back to back, as the machine's load drifts between runs. After the rounds: the BENCH_SWEEP runs,
 * ours-inproc unpaced and paced, BullMQ unpaced and paced.
 *
 * Figures per run: jobs/s = jobs ÷ (first submission → last job done); start and done p50/p99; for ours also
 * `sent_ms`, created → the enqueue outbox row's publishedAt (SendMessageBatch returned). Clocks — ours:
 * created = the job row's createdAt, start = startedAt, done = finishedAt, from the runtime's Node clock
 * (`new Date()`, ms, DATETIME(3)) subtracted in SQL; createdAt is taken inside createJob, so the HTTP/JWT/limit
 * work before it is in jobs/s but not in created → start. Over HTTP also `submit_to_start_ms`: the client's
 * `Date.now()` just before the request → startedAt read as epoch ms, two processes reading one machine's clock.
 * Peers: submit = client Node clock just before the enqueue call, start = handler entry, done = after the
 * result INSERT returned (sub-ms, same process). A run of ours ends once every outbox row is settled (terminal
 * events published, up to 2 s after the last job); a peer's once every job is done.
 *
 * CPU per job (bench/peers/cpu.ts): user + system CPU of each process taking part ÷ jobs, /proc — ours: the
 * runtime's main thread, its consumer thread, its other threads (V8's GC and compiler helpers), the MariaDB
 * server (the pid in its @@pid_file), the emulators' process tree, this process (the clients); a peer: this
 * process (its library and clients), its servers (PostgreSQL: the postmaster and all its children; Redis), the
 * emulators. Under each run: `rw_syscalls_per_job` and `ctx_switches_per_job` by group in the summary, and a
 * `db_per_job` line (bench/peers/db-cost.ts): the database server's CPU, rows written (MariaDB:
 * Handler_write/update/delete, or Innodb_rows_* where the server has them; PostgreSQL: pg_stat_database of the
 * bench database, read once the backends have flushed), commits, and redo (Innodb_lsn_current) or WAL
 * (pg_current_wal_lsn) bytes. These counters are server-wide: other clients of the server count too.
 *
 * Statement windows (bench/peers/statement-window.ts): BENCH_LOG_JOBS (200) jobs with MariaDB's general log on,
 * on a runtime of their own (own database, own in-process fauxqs, own database user); each round's over HTTP,
 * one user per job, gives that round's write transactions per job; one through ours-inproc after the rounds.
 * BENCH_LOG_JOBS=0 skips them. BENCH_SQL_DUMP=<file>: each window's classified SQL to <file>.<run id>.
 *
 * BENCH_SWEEP=<fractions> (e.g. 0.5,0.7,1): after the rounds, ours-http (one user per job) and graphile-worker
 * each paced at those fractions of its own median unpaced throughput, a `load_sweep` line per fraction.
 * BENCH_CPU_PROF=<dir>: CPU profiles (node:inspector, every thread of the runtime process: the main thread's file,
 * and a `….worker<n>.cpuprofile` per worker thread, the consumer thread the busy one) of round 1's ours-http
 * unpaced run (`ours-http-unpaced-…`) and paced run (`ours-http-paced-…`), each read with
 * `npm run bench:profile-top -- <file> [N] [jobs]`. BENCH_CPU_PROF_HOST=<dir>: `--cpu-prof` for the whole runtime
 * process, a profile per thread at exit. BENCH_HOST_NODE_FLAGS: extra node flags for the runtime and emulators.
 * BENCH_EMULATORS=in-runtime: our runtime runs fauxqs and the mock on its own main thread, exactly as `npm start`
 * does (the peers keep the emulators' mock); its CPU then holds theirs, and cpu_ratio counts them as ours.
 * One run at a time: a second run drops and recreates the databases under the first.
 * Env: DATABASE_URL (MariaDB server), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432), BENCH_REDIS (127.0.0.1:6379).
 *
 * Last lines (bench/peers/summary.ts): `share_detail`, `cpu_detail`, `db_detail`, a `rounds=` line with each
 * figure per round, then each as the median of the rounds with its range (`peer_ratio=0.61 range=0.48..0.68`):
 * - peer_ratio: ours-http jobs/s ÷ graphile-worker jobs/s, unpaced;
 * - peer_ratio_few_users: ours-http-few jobs/s ÷ the same graphile-worker run's;
 * - share_handoff_ratio: ours-http paced, created → startedAt p50 ÷ graphile-worker paced, submit → start p50;
 * - share_submit_ratio: ours-http paced, client submit → startedAt p50 ÷ the same graphile-worker p50 (how busy
 *   each paced run kept the machine is on the `share_detail` line: `machine_busy`, ./peers/summary.ts);
 * - cpu_ratio: ours-http's CPU per job without the emulators' ÷ graphile-worker's total, unpaced;
 * - db_cpu_ratio: MariaDB's CPU per job in ours-http unpaced ÷ PostgreSQL's in graphile-worker unpaced;
 * - write_tx_per_job: committed transactions with a write per job, the rounds' statement windows.
 * Before them, when ours-http-load ran: share_handoff_ratio_same_load and share_submit_ratio_same_load (the two
 * share ratios with ours-http-load in place of ours-http paced), share_handoff_ratio_kept_same_load and
 * share_submit_ratio_kept_same_load (ours-http-kload against graphile-worker-kept paced), after a `load_detail` line
 * with each round's rates, hand-offs and machine_busy. Before those, when graphile-worker-kept ran: peer_ratio_kept (ours-http jobs/s ÷ graphile-worker-kept jobs/s,
 * unpaced), db_cpu_ratio_kept (MariaDB's CPU per job in ours-http unpaced ÷ PostgreSQL's in graphile-worker-kept
 * unpaced), cpu_ratio_kept (as cpu_ratio, against the kept peer's total), share_handoff_ratio_kept and
 * share_submit_ratio_kept (as the two share ratios, against the kept peer paced at the share of its own throughput:
 * the hand-off ratio divides by its created → start, the submit ratio by its client submit → start)
 * and cpu_ratio_kept_no_emulators (as cpu_ratio_kept, the emulators left out of both sides), after a `kept_detail` line.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../lib/db/database-url.ts';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { percentile, type LoadPlan, type RunFigures } from './peers/load.ts';
import { startOursHost, waitForOursIdle, waitForOutboxSettled } from './peers/ours.ts';
import { submitOverHttp } from './peers/http-clients.ts';
import { mariadbServerPids, postgresServerPids, postgresWrites } from './peers/db-cost.ts';
import { dropPostgresDatabase, onPostgresServer, peerTablesSql } from './peers/peer-task.ts';
import type { PeerSystem } from './peers/peer-system.ts';
import type { UserGroup } from './peers/ours-host.ts';
import { startGraphilePeer } from './peers/graphile-peer.ts';
import { startGraphileKeptPeer } from './peers/graphile-kept-peer.ts';
import { startBullmqPeer } from './peers/bullmq-peer.ts';
import { oursRun, peerRun, warmPeer, type OursSubmission, type RunContext } from './peers/runs.ts';
import { formatPaths, pathTotals, statementWindow } from './peers/statement-window.ts';
import { closingLines, sameLoadRate, summaryRows, type RoundFigures } from './peers/summary.ts';
import { workloadFromEnv } from './peers/workload.ts';
import { portOpen, positiveNumber, sweepFromEnv } from './peers/config.ts';
import { startEmulators } from './peers/emulator-process.ts';

const env = process.env;
const jobs = Math.floor(positiveNumber('BENCH_JOBS', 1000));
const clients = Math.floor(positiveNumber('BENCH_CLIENTS', 4));
const peerConcurrency = Math.floor(positiveNumber('BENCH_PEER_CONCURRENCY', 10));
const logJobs = Number(env.BENCH_LOG_JOBS ?? 200);
const warmupJobs = Number(env.BENCH_WARMUP ?? 300);
const share = positiveNumber('BENCH_SHARE', 0.8);
const fewUsers: UserGroup = { group: 'few', users: Math.floor(positiveNumber('BENCH_FEW_USERS', 250)) };
const rounds = Math.max(1, Math.floor(positiveNumber('BENCH_ROUNDS', 5)));
const sweepFractions = sweepFromEnv();
const sameLoad = env.BENCH_SAME_LOAD !== '0';
const workload = workloadFromEnv();
const DB = 'aijobs_bench_peers';
const LOG_DB = 'aijobs_bench_peers_log';
const KEPT_DB = 'aijobs_bench_peers_kept';
const pgBase = (env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const [redisHost = '127.0.0.1', redisPort = '6379'] = (env.BENCH_REDIS ?? '127.0.0.1:6379').split(':');
const report = (line: string) => console.log(line);

// ---- setup: our databases, the emulators, our runtime host, the peers' PostgreSQL database ------------------
const serverUrl = databaseUrlFromEnv();
const s = parseDatabaseUrl(serverUrl);
const admin = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password, multipleStatements: true });
for (const db of [DB, LOG_DB]) {
  await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  await migrateDatabase(withDatabase(serverUrl, db));
}
const emulators = await startEmulators();
const { endpoints } = emulators;
report(`peers bench: workload=${workload.name} jobs=${jobs} clients=${clients} few_users=${fewUsers.users} share=${share} rounds=${rounds} peer_concurrency=${peerConcurrency}`
  + ` log_jobs=${logJobs} moto=${endpoints.awsEndpoint ? 'yes' : 'no'} emulators=${env.BENCH_EMULATORS ?? 'separate'} (${new Date().toISOString()})`);
// BENCH_EMULATORS=in-runtime: fauxqs and the mock on the runtime's main thread, exactly as `npm start` runs them.
const inRuntime = env.BENCH_EMULATORS === 'in-runtime';
if (env.BENCH_EMULATORS && !inRuntime && env.BENCH_EMULATORS !== 'separate') throw new Error(`BENCH_EMULATORS=${env.BENCH_EMULATORS}: expected separate or in-runtime`);
const host = await startOursHost(withDatabase(serverUrl, DB), inRuntime ? { ...(endpoints.awsEndpoint ? { awsEndpoint: endpoints.awsEndpoint } : {}) } : endpoints);
const pgUrl = `${pgBase}/${DB}`;
let ctx: RunContext = { admin, database: DB, mariadbPids: await mariadbServerPids(admin), emulatorsPid: emulators.pid, report };
let graphile: PeerSystem | undefined;
let kept: { system: PeerSystem; ctx: RunContext } | undefined;
if (await portOpen(new URL(pgBase).hostname, Number(new URL(pgBase).port || 5432))) {
  await dropPostgresDatabase(pg.Client, pgBase, DB);
  await onPostgresServer(pg.Client, pgBase, `CREATE DATABASE ${DB}`);
  const pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
  pool.on('error', (err) => console.error(`peer results pool: ${err.message}`));
  await pool.query(peerTablesSql(workload));
  graphile = await startGraphilePeer({ databaseUrl: pgUrl, mockAiUrl: endpoints.mockAiUrl, workload, concurrency: peerConcurrency, clients });
  // After graphile-worker installed its schema: the baseline of the database's row counts (waits ~11 s).
  const serverPids = await postgresServerPids(pool);
  // A server with autovacuum off (this machine's CI configuration turns it off) never cleans the dead rows of a
  // run while it runs, as InnoDB's purge does MariaDB's: its CPU a job reads low. Point BENCH_PG_URL at a server
  // with the defaults (docs/performance.md) to compare like with like.
  const { rows: [settings] } = await pool.query<{ version: string; autovacuum: string }>("SELECT current_setting('server_version') AS version, current_setting('autovacuum') AS autovacuum");
  report(`postgresql server_version=${settings!.version} autovacuum=${settings!.autovacuum}${settings!.autovacuum === 'on' ? '' : ' (dead rows are not cleaned during the runs: the peers\' database CPU reads low)'}`);
  ctx = { ...ctx, pg: { pool, database: DB, serverPids, writes: await postgresWrites(pool, DB) } };
  if (env.BENCH_KEPT !== '0') {
    // A database of its own: graphile-worker's NOTIFY channel is per database, so the two runners never wake each other.
    await dropPostgresDatabase(pg.Client, pgBase, KEPT_DB);
    await onPostgresServer(pg.Client, pgBase, `CREATE DATABASE ${KEPT_DB}`);
    const keptPool = new pg.Pool({ connectionString: `${pgBase}/${KEPT_DB}`, max: 2 });
    keptPool.on('error', (err) => console.error(`kept peer results pool: ${err.message}`));
    await keptPool.query(peerTablesSql(workload));
    const system = await startGraphileKeptPeer({ databaseUrl: `${pgBase}/${KEPT_DB}`, mockAiUrl: endpoints.mockAiUrl, realtimeHttpEndpoint: endpoints.realtimeHttpEndpoint, workload, concurrency: peerConcurrency, clients });
    kept = { system, ctx: { ...ctx, pg: { pool: keptPool, database: KEPT_DB, serverPids, writes: await postgresWrites(keptPool, KEPT_DB) } } };
  }
} else report(`graphile-worker and bullmq: skipped (PostgreSQL at ${pgBase} refused the connection)`);

// ---- the ways in ------------------------------------------------------------------------------------------
/**
 * Ours over HTTP: `users` given (their tokens signed once, so later runs send tokens the runtime has seen), or
 * (default) one user per job, a fresh group named after the run. Tokens are signed before the run's meters start.
 */
const tokensByGroup = new Map<string, string[]>();
async function http(plan: LoadPlan, runId: string, users: UserGroup = { group: runId, users: plan.jobs }) {
  const tokens = tokensByGroup.get(users.group) ?? await host.request<string[]>({ cmd: 'tokens', users });
  if (users === fewUsers) tokensByGroup.set(users.group, tokens);
  return () => submitOverHttp(host.url, tokens, plan, runId, () => workload);
}
const inproc = (plan: LoadPlan, runId: string) => () => host.request<OursSubmission>({ cmd: 'inproc', plan, runId, users: fewUsers });
/** Paced at the share of the system's throughput (jobs/s) in `f`, its unpaced run just before. */
const paced = (f: RunFigures): LoadPlan => ({ jobs, clients, ratePerSecond: share * f.jobsPerSecond });
/** Ours paced to load the machine as `peer` did (./peers/summary.ts sameLoadRate); none when a figure is missing. */
function sameLoadPlan(oursPaced: RunFigures, peer: RunFigures): LoadPlan | undefined {
  const rate = sameLoadRate(oursPaced, peer);
  return Number.isFinite(rate) && rate > 0 ? { jobs, clients, ratePerSecond: rate } : undefined;
}
const unpaced: LoadPlan = { jobs, clients };

async function warmOurs(): Promise<void> {
  if (warmupJobs <= 0) return;
  const plan = { jobs: warmupJobs, clients };
  await (await http(plan, 'w1'))();
  await (await http(plan, 'wf', fewUsers))();
  await inproc(plan, 'wi')();
  await waitForOursIdle(admin, DB);
  await waitForOutboxSettled(admin, DB);
}

/** A statement window over HTTP (one user per job) or in process (the few users), on its own runtime and database. */
function window(way: 'http' | 'inproc', runId: string) {
  return statementWindow({
    admin, server: { host: s.host, port: s.port }, database: LOG_DB, endpoints, way, plan: { jobs: logJobs, clients }, runId,
    users: way === 'http' ? { group: runId, users: logJobs } : fewUsers, jobFor: () => workload, dumpFile: env.BENCH_SQL_DUMP,
  });
}

// ---- the rounds -------------------------------------------------------------------------------------------
const figures: RunFigures[] = [];
const roundFigures: RoundFigures[] = [];
await warmOurs();
if (graphile) await warmPeer(ctx, graphile, workload, warmupJobs, clients);
if (kept) await warmPeer(kept.ctx, kept.system, workload, warmupJobs, clients);
for (let r = 1; r <= rounds; r += 1) {
  const profile = env.BENCH_CPU_PROF && r === 1 ? env.BENCH_CPU_PROF : undefined;
  const oneUserSubmit = await http(unpaced, `hu-r${r}`);
  if (profile) await host.request({ cmd: 'profile-start' });
  const oneUser = await oursRun(ctx, host, 'ours-http', 'unpaced', unpaced, oneUserSubmit);
  if (profile) {
    await mkdir(profile, { recursive: true });
    report(`cpu profiles (runtime process, ours-http unpaced, ${jobs} jobs): ${await host.request<string>({ cmd: 'profile-stop', file: join(profile, `ours-http-unpaced-${Date.now()}.cpuprofile`) })}`);
  }
  const peerUsers = { group: `g-r${r}`, users: jobs };
  const graphileUnpaced = graphile ? await peerRun(ctx, graphile, workload, 'unpaced', unpaced, `gu-r${r}`, peerUsers) : undefined;
  const few = await oursRun(ctx, host, 'ours-http-few', 'unpaced', unpaced, await http(unpaced, `hf-r${r}`, fewUsers));
  const shareSubmit = await http(paced(oneUser), `hs-r${r}`);
  if (profile) await host.request({ cmd: 'profile-start' });
  const oursShare = await oursRun(ctx, host, 'ours-http', 'paced', paced(oneUser), shareSubmit);
  if (profile) {
    report(`cpu profiles (runtime process, ours-http paced, ${jobs} jobs): ${await host.request<string>({ cmd: 'profile-stop', file: join(profile, `ours-http-paced-${Date.now()}.cpuprofile`) })}`);
  }
  const graphileShare = graphile && graphileUnpaced ? await peerRun(ctx, graphile, workload, 'paced', paced(graphileUnpaced), `gs-r${r}`, peerUsers) : undefined;
  const loadPlan = sameLoad && graphileShare ? sameLoadPlan(oursShare, graphileShare) : undefined;
  const oursSameLoad = loadPlan ? await oursRun(ctx, host, 'ours-http-load', 'paced', loadPlan, await http(loadPlan, `hl-r${r}`)) : undefined;
  const graphileKept = kept ? await peerRun(kept.ctx, kept.system, workload, 'unpaced', unpaced, `gk-r${r}`, peerUsers) : undefined;
  const graphileKeptShare = kept && graphileKept ? await peerRun(kept.ctx, kept.system, workload, 'paced', paced(graphileKept), `gks-r${r}`, peerUsers) : undefined;
  const keptLoadPlan = sameLoad && graphileKeptShare ? sameLoadPlan(oursShare, graphileKeptShare) : undefined;
  const oursKeptLoad = keptLoadPlan ? await oursRun(ctx, host, 'ours-http-kload', 'paced', keptLoadPlan, await http(keptLoadPlan, `hk-r${r}`)) : undefined;
  figures.push(...[oneUser, graphileUnpaced, few, oursShare, graphileShare, oursSameLoad, graphileKept, graphileKeptShare, oursKeptLoad].filter((f): f is RunFigures => f !== undefined));
  let writeTxPerJob: number | undefined;
  if (logJobs > 0) {
    const w = await window('http', `lh-r${r}`);
    if (r === 1) formatPaths(`ours-http (one user per job, round ${r})`, w).forEach(report);
    writeTxPerJob = w.complete ? pathTotals(w).writeTransactions / w.jobs : NaN;
  }
  roundFigures.push({ oneUser, fewUsers: few, oursShare, graphile: graphileUnpaced, graphileShare, oursSameLoad, graphileKept, graphileKeptShare, oursKeptLoad, writeTxPerJob });
}

// ---- after the rounds: the sweep, ours in process, BullMQ, the in-process statement window ----------------
const sweep: string[] = [];
const median = (values: number[]) => percentile(values, 50);
for (const [k, fraction] of sweepFractions.entries()) {
  const oursRate = fraction * median(roundFigures.map((r) => r.oneUser.jobsPerSecond));
  const plan = { jobs, clients, ratePerSecond: oursRate };
  const ours = await oursRun(ctx, host, 'ours-http', 'paced', plan, await http(plan, `sw${k}`));
  const peerRate = fraction * median(roundFigures.flatMap((r) => (r.graphile ? [r.graphile.jobsPerSecond] : [])));
  const peer = graphile && Number.isFinite(peerRate)
    ? await peerRun(ctx, graphile, workload, 'paced', { jobs, clients, ratePerSecond: peerRate }, `gsw${k}`, { group: `gsw${k}`, users: jobs }) : undefined;
  const p50 = (values: number[] | undefined) => (values ? percentile(values, 50).toFixed(1) : 'n/a');
  sweep.push(`load_sweep fraction=${fraction} ours_rate=${oursRate.toFixed(1)} ours_handoff_p50_ms=${p50(ours.toStartMs)} ours_submit_to_start_p50_ms=${p50(ours.submitToStartMs)}`
    + ` ours_sent_p50_ms=${p50(ours.toSentMs)} graphile_rate=${peerRate.toFixed(1)} graphile_start_p50_ms=${p50(peer?.toStartMs)}`);
}
await graphile?.stop();
await kept?.system.stop();
const inprocUnpaced = await oursRun(ctx, host, 'ours-inproc', 'unpaced', unpaced, inproc(unpaced, 'iu'));
figures.push(inprocUnpaced, await oursRun(ctx, host, 'ours-inproc', 'paced', paced(inprocUnpaced), inproc(paced(inprocUnpaced), 'ip')));
await host.stop();
if (ctx.pg && await portOpen(redisHost, Number(redisPort))) {
  const bull = await startBullmqPeer({ databaseUrl: pgUrl, mockAiUrl: endpoints.mockAiUrl, workload, redis: { host: redisHost, port: Number(redisPort) }, concurrency: peerConcurrency });
  await warmPeer(ctx, bull, workload, warmupJobs, clients);
  const users = { group: 'bullmq', users: jobs };
  const bullUnpaced = await peerRun(ctx, bull, workload, 'unpaced', unpaced, 'bu', users);
  figures.push(bullUnpaced, await peerRun(ctx, bull, workload, 'paced', paced(bullUnpaced), 'bp', users));
  await bull.stop();
} else if (ctx.pg) report(`bullmq: skipped (Redis at ${redisHost}:${redisPort} refused the connection)`);
if (logJobs > 0) formatPaths('ours-inproc', await window('inproc', 'li')).forEach(report);

// ---- cleanup, then the closing lines -----------------------------------------------------------------------
if (ctx.pg) {
  await ctx.pg.pool.end();
  await dropPostgresDatabase(pg.Client, pgBase, DB);
}
if (kept?.ctx.pg) {
  await kept.ctx.pg.pool.end();
  await dropPostgresDatabase(pg.Client, pgBase, KEPT_DB);
}
await emulators.stop();
for (const db of [DB, LOG_DB]) await admin.query(`DROP DATABASE IF EXISTS ${db}`);
await admin.end();
summaryRows(figures).forEach(report);
sweep.forEach(report);
closingLines(roundFigures, share).forEach(report);
