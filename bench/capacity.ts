/**
 * `npm run bench:capacity`: what one job costs each AWS service and the database, from a modest mixed workload
 * through the HTTP API on the local runtime — the per-job figures docs/capacity.md is computed from, printed
 * as `name=value` lines (bench/capacity/figures.ts says how each is derived).
 *
 * Workload: BENCH_CAPACITY_JOBS (300) jobs, quiz_generation (count 2), feynman_evaluation and
 * flashcard_generation (up to 3 cards) in turn, one user per job, from BENCH_CLIENTS (4) clients offered
 * BENCH_CAPACITY_RATE (50) jobs/s, after BENCH_WARMUP (30) untimed jobs; then each job's result read once
 * (GET), as a client fetching what it asked for; BENCH_CAPACITY_TYPES=<type,…> keeps only those job types. The
 * runtime host, emulators, CPU and database meters are the peers bench's (bench/peers.ts, whose header describes them): the runtime as `npm start` starts it, fauxqs,
 * the mock and moto_server in the emulators' process — here behind counting proxies, so every SQS, EventBridge
 * and KMS request the runtime makes is counted at the wire (bench/capacity/aws-call-counter.ts).
 *
 * Two passes, as MariaDB's general log slows the server: the measured run (CPU, rows written, redo bytes,
 * AWS requests), then BENCH_LOG_JOBS (150; 0 skips it) jobs of the same mix on a runtime and database of their
 * own with the general log on, for write transactions, statements and round trips per job.
 * Database counters are server-wide (other clients of the server count too): run it on a quiet server.
 * Env: DATABASE_URL (MariaDB server); BENCH_CONSUMER_MEMORY_MB (1024), the memory the consumer's GB-seconds
 * are priced at.
 */
import mysql from 'mysql2/promise';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../lib/db/database-url.ts';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { JOB_AGGREGATE_TYPE, JOB_TERMINAL_EVENTS } from '../lib/outbox/event-types.ts';
import { countsBetween, emptyCounts, type AwsCallCounts } from './capacity/aws-call-counter.ts';
import { capacityLines } from './capacity/figures.ts';
import { startEmulators } from './peers/emulator-process.ts';
import { positiveNumber } from './peers/config.ts';
import { startCpuMeter, threadsCpuMs } from './peers/cpu.ts';
import { mariadbServerPids } from './peers/db-cost.ts';
import { readResultsOverHttp, submitOverHttp, type HttpSubmission } from './peers/http-clients.ts';
import { startOursHost, waitForOursIdle, waitForOutboxSettled } from './peers/ours.ts';
import { oursRun, type RunContext } from './peers/runs.ts';
import { formatPaths, pathTotals, statementWindow } from './peers/statement-window.ts';
import { BENCH_WORKLOADS, FLASHCARDS_JOB, type OursJob } from './peers/workload.ts';

const env = process.env;
const jobs = Math.floor(positiveNumber('BENCH_CAPACITY_JOBS', 300));
const clients = Math.floor(positiveNumber('BENCH_CLIENTS', 4));
const rate = positiveNumber('BENCH_CAPACITY_RATE', 50);
const warmupJobs = Number(env.BENCH_WARMUP ?? 30);
const logJobs = Number(env.BENCH_LOG_JOBS ?? 150);
const consumerMemoryMb = positiveNumber('BENCH_CONSUMER_MEMORY_MB', 1024);
const ALL_TYPES: readonly OursJob[] = [...BENCH_WORKLOADS, FLASHCARDS_JOB];
const only = env.BENCH_CAPACITY_TYPES?.split(',').map((t) => t.trim()).filter(Boolean);
const MIX = only ? ALL_TYPES.filter((job) => only.includes(job.jobType)) : ALL_TYPES;
if (MIX.length === 0) throw new Error(`BENCH_CAPACITY_TYPES names none of ${ALL_TYPES.map((j) => j.jobType).join(', ')}`);
const jobFor = (i: number) => MIX[i % MIX.length]!;
const DB = 'aijobs_bench_capacity';
const LOG_DB = 'aijobs_bench_capacity_log';
const report = (line: string) => console.log(line);

const serverUrl = databaseUrlFromEnv();
const s = parseDatabaseUrl(serverUrl);
const admin = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password, multipleStatements: true });
for (const db of [DB, LOG_DB]) {
  await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  await migrateDatabase(withDatabase(serverUrl, db));
}
const emulators = await startEmulators(['--count']);
const { endpoints } = emulators;
report(`capacity bench: jobs=${jobs} clients=${clients} rate=${rate} log_jobs=${logJobs} moto=${endpoints.awsEndpoint ? 'yes' : 'no'} (${new Date().toISOString()})`);
const host = await startOursHost(withDatabase(serverUrl, DB), endpoints);
const ctx: RunContext = { admin, database: DB, mariadbPids: await mariadbServerPids(admin), emulatorsPid: emulators.pid, report };

/** The counting proxies' totals so far (SQS; the AWS-API server when moto_server runs). */
async function awsCounts(): Promise<{ sqs: AwsCallCounts; aws?: AwsCallCounts }> {
  const read = async (url: string) => (await (await fetch(url)).json()) as AwsCallCounts;
  return { sqs: endpoints.counts ? await read(endpoints.counts.sqs) : emptyCounts(), ...(endpoints.counts?.aws ? { aws: await read(endpoints.counts.aws) } : {}) };
}

const tokensFor = (group: string, users: number) => host.request<string[]>({ cmd: 'tokens', users: { group, users } });

// ---- warm-up, then the measured run: creates, the run waited out (outbox settled), then one read per job -----
if (warmupJobs > 0) {
  await submitOverHttp(host.url, await tokensFor('cw', warmupJobs), { jobs: warmupJobs, clients }, 'cw', jobFor);
  await waitForOursIdle(admin, DB);
  await waitForOutboxSettled(admin, DB);
}
const tokens = await tokensFor('cap', jobs);
const plan = { jobs, clients, ratePerSecond: rate };
const before = await awsCounts();
let submission: HttpSubmission | undefined;
const run = await oursRun(ctx, host, 'ours-http-mixed', 'paced', plan, async () => (submission = await submitOverHttp(host.url, tokens, plan, 'cap', jobFor)));
const after = await awsCounts();
const ids = submission!.ids;
const [[events]] = await admin.query<mysql.RowDataPacket[]>(
  `SELECT COUNT(*) AS n FROM \`${DB}\`.OutboxEvent WHERE aggregateType = ? AND eventType IN (?) AND aggregateId IN (?)`,
  [JOB_AGGREGATE_TYPE, Object.values(JOB_TERMINAL_EVENTS), ids]);
const [runRows] = await admin.query<mysql.RowDataPacket[]>(
  `SELECT TIMESTAMPDIFF(MICROSECOND, startedAt, finishedAt) / 1000 AS ms FROM \`${DB}\`.AiJob WHERE id IN (?)`, [ids]);
const runMs = runRows.map((r) => (r.ms === null ? NaN : Number(r.ms)));
const runtimeThreads = { readMs: () => threadsCpuMs(host.pid, () => true) ?? 0 };
const readMeter = startCpuMeter({ runtime: runtimeThreads, mariadb: () => ctx.mariadbPids });
const reads = await readResultsOverHttp(host.url, tokens, ids, clients, jobFor);
const readCpu = readMeter.stop(1);
if (reads !== jobs) report(`result reads: ${reads} of ${jobs} answered 200`);
await host.stop();

// ---- the statement window: the same mix with the general log on, on its own runtime and database ----------
let statements: { counts: ReturnType<typeof pathTotals>; jobs: number; complete: boolean } | undefined;
if (logJobs > 0) {
  const window = await statementWindow({
    admin, server: { host: s.host, port: s.port }, database: LOG_DB, endpoints, way: 'http', plan: { jobs: logJobs, clients, ratePerSecond: rate },
    runId: 'cl', users: { group: 'cl', users: logJobs }, jobFor, dumpFile: env.BENCH_SQL_DUMP,
  });
  formatPaths('ours-http-mixed', window).forEach(report);
  statements = { counts: pathTotals(window), jobs: window.jobs, complete: window.complete };
}
await emulators.stop();
for (const db of [DB, LOG_DB]) await admin.query(`DROP DATABASE IF EXISTS ${db}`);
await admin.end();

const cpu = run.cpuPerJob ?? {};
const mix = Object.fromEntries(MIX.map((job, k) => [job.jobType, Array.from({ length: jobs }, (_, i) => i).filter((i) => i % MIX.length === k).length]));
capacityLines({
  jobs, mix, offeredPerSecond: rate, statements,
  db: { writes: run.dbWrites!.writes, cpuMs: (cpu.mariadb ?? NaN) * jobs, source: run.dbWrites!.source },
  runtimeCpuMs: ((cpu['runtime.main'] ?? 0) + (cpu['runtime.consumers'] ?? 0) + (cpu['runtime.other'] ?? 0)) * jobs,
  sqs: countsBetween(before.sqs, after.sqs), aws: before.aws && after.aws ? countsBetween(before.aws, after.aws) : undefined,
  terminalEvents: Number(events?.n ?? 0), apiRequests: { creates: jobs, reads },
  reads: { dbCpuMs: readCpu.mariadb ?? NaN, runtimeCpuMs: readCpu.runtime ?? NaN },
  runMs, consumerCpuMs: (cpu['runtime.consumers'] ?? NaN) * jobs, consumerMemoryMb,
}).forEach(report);
