/**
 * `npm run bench:e2e`: N jobs created through the HTTP API of the local runtime (mock provider), measuring
 * jobs/s to terminal, p50/p99 create→running and create→succeeded, database commits per job, and — in the same
 * run, at the same concurrency — the server's raw commit rate (one-row transactions through mysql2).
 * Last line: e2e_ratio=<jobs/s ÷ (raw commits/s ÷ commits per job)>.
 *
 * SQS (fauxqs) and the mock provider run in a child process (they are remote services in production).
 * Env: DATABASE_URL (server; uses database `aijobs_bench_e2e`), BENCH_JOBS (600), BENCH_CONCURRENCY (4).
 */
import mysql from 'mysql2/promise';
import { startEmulators } from './peers/emulator-process.ts';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../lib/db/database-url.ts';
import { signLocalToken } from '../lib/api/local-jwt.ts';
import { startLocalRuntime } from '../lib/dev/local-runtime/runtime.ts';
import { getPrisma } from '../lib/db/client.ts';

const jobs = Number(process.env.BENCH_JOBS ?? 600);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);
const url = withDatabase(databaseUrlFromEnv(), 'aijobs_bench_e2e');
const s = parseDatabaseUrl(url);
const admin = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password });
await admin.query('DROP DATABASE IF EXISTS aijobs_bench_e2e');

// SQS and the AI provider are remote services in production: here they run in a process of their own, so the
// runtime's event loop carries only our code (API, dispatch, engine), as a Lambda's would.
// The shared launcher keeps the emulators' stdin open for as long as this process runs (they stop when it ends).
const emulators = await startEmulators();
const endpoints = { sqsEndpoint: emulators.endpoints.sqsEndpoint, mockAiUrl: emulators.endpoints.mockAiUrl };
const runtime = await startLocalRuntime({ databaseUrl: `${url}?connectionLimit=20`, port: 0, useMoto: false, ...endpoints, log: () => undefined });
const tokens = await Promise.all(Array.from({ length: 100 }, (_, u) =>
  signLocalToken(runtime.jwtKey, { sub: `bench-${u}`, ...runtime.audience })));

async function post(i: number): Promise<string> {
  const res = await fetch(`${runtime.url}/api/ai/feynman-evaluations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens[i % tokens.length]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ concept: `Concept ${i}`, explanation: `Explanation ${i}: energy is conserved.` }),
  });
  if (res.status !== 202) throw new Error(`create ${i}: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { jobId: string }).jobId;
}

async function commits(): Promise<number> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Handler_commit'");
  return Number(rows[0]?.Value ?? 0);
}

/** Creates `jobs` jobs with `concurrency` clients, each keeping at most 4 of its users' jobs active. */
async function run(): Promise<{ seconds: number; ids: string[] }> {
  const ids: string[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < jobs; i = next++) ids.push(await post(i));
  }));
  // Poll on the side connection (not through the runtime's own client, which the engine is busy with).
  for (;;) {
    const [[row]] = await admin.query<mysql.RowDataPacket[]>("SELECT COUNT(*) AS n FROM aijobs_bench_e2e.AiJob WHERE lifecycleStatus IN ('queued', 'running')");
    if (Number(row?.n) === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { seconds: (performance.now() - started) / 1000, ids };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const commitsBefore = await commits();
const { seconds, ids } = await run();
const commitsPerJob = (await commits() - commitsBefore) / jobs;
const rows = await getPrisma().aiJob.findMany({ where: { id: { in: ids } }, select: { createdAt: true, startedAt: true, finishedAt: true, lifecycleStatus: true } });
await runtime.stop();
await emulators.stop();

const toRunning = rows.map((r) => (r.startedAt?.getTime() ?? NaN) - r.createdAt.getTime());
const toDone = rows.map((r) => (r.finishedAt?.getTime() ?? NaN) - r.createdAt.getTime());
const succeeded = rows.filter((r) => r.lifecycleStatus === 'succeeded').length;

// Raw commit rate: `concurrency` connections committing one-row transactions for 5 s.
await admin.query('CREATE TABLE IF NOT EXISTS aijobs_bench_e2e.raw_commits (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)');
const pool = mysql.createPool({ host: s.host, port: s.port, user: s.user, password: s.password, database: 'aijobs_bench_e2e', connectionLimit: concurrency });
let rawCommits = 0;
const rawStarted = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (performance.now() - rawStarted < Number(process.env.BENCH_RAW_MS ?? 5000)) {
    const conn = await pool.getConnection();
    await conn.beginTransaction();
    await conn.query('INSERT INTO raw_commits (v) VALUES (1)');
    await conn.commit();
    conn.release();
    rawCommits += 1;
  }
}));
const rawPerSecond = rawCommits / ((performance.now() - rawStarted) / 1000);
await pool.end();
await admin.query('DROP DATABASE IF EXISTS aijobs_bench_e2e');
await admin.end();

const jobsPerSecond = jobs / seconds;
console.log(`jobs=${jobs} concurrency=${concurrency} succeeded=${succeeded}`);
console.log(`jobs_per_s_to_terminal=${jobsPerSecond.toFixed(1)}`);
console.log(`create_to_running_ms p50=${percentile(toRunning, 50)} p99=${percentile(toRunning, 99)}`);
console.log(`create_to_succeeded_ms p50=${percentile(toDone, 50)} p99=${percentile(toDone, 99)}`);
console.log(`commits_per_job=${commitsPerJob.toFixed(1)} (Handler_commit delta, includes reads in autocommit)`);
console.log(`raw_commits_per_s=${rawPerSecond.toFixed(1)}`);
console.log(`e2e_ratio=${(jobsPerSecond / (rawPerSecond / commitsPerJob)).toFixed(2)}`);
