/** One size of `npm run bench:scale` (see bench/scale.ts); prints its figures as one JSON line. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { signLocalToken } from '../lib/api/local-jwt.ts';
import { getPrisma } from '../lib/db/client.ts';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../lib/db/database-url.ts';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { startLocalRuntime } from '../lib/dev/local-runtime/runtime.ts';
import { reaperDepsFromEnv, runReaper } from '../lib/engine/reaper-run.ts';
import { jobRegistry } from '../lib/jobs/registry.ts';
import { runMaintenance } from '../lib/maintenance/maintenance-run.ts';
import { DEFAULT_RETENTION } from '../lib/maintenance/retention-config.ts';
import { runRetention } from '../lib/maintenance/retention.ts';
import { seedFinishedJobs, tableBytes } from './scale-seed.ts';

const n = Number(process.argv[2]);
const repeats = Number(process.env.BENCH_REPEATS ?? 7);
const database = `aijobs_bench_scale_${n}`;
const url = withDatabase(databaseUrlFromEnv(), database);
process.env.DATABASE_URL = url;
const s = parseDatabaseUrl(url);
const server = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password, multipleStatements: true });
await server.query(`DROP DATABASE IF EXISTS ${database}`);
await migrateDatabase(url);
await server.query(`USE ${database}`);

let t0 = performance.now();
await seedFinishedJobs(server, n);
const seedSeconds = (performance.now() - t0) / 1000;
const seededBytes = await tableBytes(server);

const log = { info: () => undefined };
const config = { ...DEFAULT_RETENTION, budgetMs: 3_600_000, batchSize: 2_000 };
t0 = performance.now();
await runMaintenance({ db: getPrisma(), registry: jobRegistry, config, logger: log });
const catchUpSeconds = (performance.now() - t0) / 1000;
// Let InnoDB purge what the catch-up deleted (it would have, in the weeks between scheduled runs): index
// ranges that still hold delete-marked entries are slower to scan than steady state. At most 2 minutes.
for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
  const [rows] = await server.query<mysql.RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'");
  if (Number(rows[0]?.Value ?? 0) < 5_000) break;
  await new Promise((r) => setTimeout(r, 1_000));
}
const retainedBytes = await tableBytes(server);

const emulators = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./emulators.ts', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
const endpoints = JSON.parse((await once(createInterface({ input: emulators.stdout! }), 'line'))[0] as string) as { sqsEndpoint: string; mockAiUrl: string };
const runtime = await startLocalRuntime({
  databaseUrl: `${url}?connectionLimit=10`, port: 0, useMoto: false, ...endpoints, log: () => undefined,
  dispatchIntervalMs: 500, reaperIntervalMs: 3_600_000, maintenanceIntervalMs: 3_600_000,
});
const adminToken = await signLocalToken(runtime.jwtKey, { sub: 'root', admin: true, ...runtime.audience });
const userToken = await signLocalToken(runtime.jwtKey, { sub: 'u7', ...runtime.audience });

async function get(path: string, token = adminToken): Promise<unknown> {
  const res = await fetch(`${runtime.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

let k = 0;
async function createToSucceeded(): Promise<void> {
  const token = await signLocalToken(runtime.jwtKey, { sub: `bench-new-${k++}`, ...runtime.audience });
  const res = await fetch(`${runtime.url}/api/ai/feynman-evaluations`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ concept: 'Energy', explanation: 'Energy is conserved.' }),
  });
  const { jobId } = (await res.json()) as { jobId: string };
  for (;;) {
    const job = (await get(`/api/ai/jobs/${jobId}`, token)) as { lifecycleStatus: string };
    if (job.lifecycleStatus === 'succeeded') return;
    if (job.lifecycleStatus !== 'queued' && job.lifecycleStatus !== 'running') throw new Error(`job ${jobId} ${job.lifecycleStatus}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < repeats; i += 1) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

const reaper = { ...reaperDepsFromEnv(), db: getPrisma() };
const ms: Record<string, number> = {
  'admin stats': await median(() => get('/admin-api/ai/stats')),
  'usage report (7 days)': await median(() => get('/admin-api/ai/usage')),
  'usage per user (7 days)': await median(() => get('/admin-api/ai/usage/users?userId=u7')),
  'admin list status=failed': await median(() => get('/admin-api/ai/jobs?status=failed')),
  'admin list jobType=quiz': await median(() => get('/admin-api/ai/jobs?jobType=quiz_generation&status=succeeded')),
  'admin list userId=u7': await median(() => get('/admin-api/ai/jobs?userId=u7')),
  "user's list": await median(() => get('/api/ai/jobs', userToken)),
  'create → succeeded': await median(createToSucceeded),
  'retention pass': await median(() => runRetention(getPrisma(), jobRegistry, DEFAULT_RETENTION, new Date())),
  'reaper pass': await median(() => runReaper(reaper)),
  '(old stats: full count)': await median(() => server.query(
    'SELECT jobType, lifecycleStatus, COUNT(*) FROM AiJob GROUP BY jobType, lifecycleStatus; SELECT status, COUNT(*) FROM OutboxEvent GROUP BY status',
  )),
};
await runtime.stop();
emulators.kill('SIGTERM');
await server.query(`DROP DATABASE IF EXISTS ${database}`);
await server.end();
console.log(JSON.stringify({ n, seedSeconds, catchUpSeconds, bytesPerJob: { seeded: seededBytes / n, afterRetention: retainedBytes / n }, ms }));
process.exit(0);
