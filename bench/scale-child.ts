/**
 * One size of `npm run bench:scale` (see bench/scale.ts). Seeds its database, lets the maintenance catch up,
 * starts the local runtime, prints one JSON line `{ "ready": … }` with the seeding figures, then times one
 * call per line read on stdin (`{"call": name}` → `{"ms": …, "rows": …}`) until `{"quit": true}`. The parent
 * asks both sizes in turn, so both are timed under the same machine load.
 * Rows read: the runtime and the direct calls connect as a database user of their own, and MariaDB's user
 * statistics (`userstat`, switched on for the run and back off after if it was off) count the rows every
 * statement of that user read — the call's work, whatever the machine's load (MySQL: null).
 */
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import mysql from 'mysql2/promise';
import { startEmulators } from './peers/emulator-process.ts';
import { signLocalToken } from '../lib/api/local-jwt.ts';
import { closePrisma, getPrisma } from '../lib/db/client.ts';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../lib/db/database-url.ts';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { closeSqlPool } from '../lib/db/sql-pool.ts';
import { startLocalRuntime } from '../lib/dev/local-runtime/runtime.ts';
import { reaperDepsFromEnv, runReaper } from '../lib/engine/reaper-run.ts';
import { jobRegistry } from '../lib/jobs/registry.ts';
import { DEFAULT_RETENTION } from '../lib/maintenance/retention-config.ts';
import { runRetention } from '../lib/maintenance/retention.ts';
import { catchUpMaintenance, seedFinishedJobs, tableBytes } from './scale-seed.ts';

const n = Number(process.argv[2]);
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

t0 = performance.now();
await catchUpMaintenance(getPrisma());
const catchUpSeconds = (performance.now() - t0) / 1000;
// Let InnoDB purge what the catch-up deleted (it would have, in the weeks between scheduled runs): index
// ranges that still hold delete-marked entries are slower to scan than steady state. At most 2 minutes.
for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
  const [rows] = await server.query<mysql.RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'");
  if (Number(rows[0]?.Value ?? 0) < 5_000) break;
  await new Promise((r) => setTimeout(r, 1_000));
}
const retainedBytes = await tableBytes(server);

// From here on, everything the calls send runs as `benchUser`, whose rows read the user statistics count.
const benchUser = `bench_scale_${randomBytes(4).toString('hex')}`;
const benchPassword = randomBytes(12).toString('hex');
await server.query(`CREATE USER '${benchUser}'@'%' IDENTIFIED BY '${benchPassword}'`);
await server.query(`GRANT ALL PRIVILEGES ON \`${database}\`.* TO '${benchUser}'@'%'`);
const userUrl = new URL(url);
userUrl.username = benchUser;
userUrl.password = benchPassword;
await closePrisma();
await closeSqlPool();
process.env.DATABASE_URL = userUrl.toString();
const userStats = await enableUserStatistics();

/** Switches MariaDB's user statistics on; returns whether this process did (and so switches them off), null on MySQL. */
async function enableUserStatistics(): Promise<boolean | null> {
  try {
    const [rows] = await server.query<mysql.RowDataPacket[]>('SELECT @@GLOBAL.userstat AS on_');
    if (Number(rows[0]?.on_) === 1) return false;
    await server.query('SET GLOBAL userstat = 1');
    return true;
  } catch {
    return null;
  }
}

/** Rows read so far by `benchUser`'s statements, or null without user statistics. */
async function rowsRead(): Promise<number | null> {
  if (userStats === null) return null;
  const [rows] = await server.query<mysql.RowDataPacket[]>('SELECT ROWS_READ AS n FROM information_schema.USER_STATISTICS WHERE USER = ?', [benchUser]);
  return Number(rows[0]?.n ?? 0);
}

// The shared launcher keeps the emulators' stdin open for as long as this process runs (they stop when it ends).
const emulators = await startEmulators();
const endpoints = { sqsEndpoint: emulators.endpoints.sqsEndpoint, mockAiUrl: emulators.endpoints.mockAiUrl };
const runtime = await startLocalRuntime({
  databaseUrl: `${userUrl.toString()}?connectionLimit=10`, port: 0, useMoto: false, ...endpoints, log: () => undefined,
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

/** A list call whose page must be full at every size (else the sizes would not do the same work). */
async function fullPage(path: string, token = adminToken): Promise<void> {
  const page = (await get(path, token)) as { items: unknown[] };
  if (page.items.length !== 20) throw new Error(`${path}: ${page.items.length} items, expected a full page of 20`);
}

const reaper = { ...reaperDepsFromEnv(), db: getPrisma() };
/** The timed calls, by name. Names in parentheses are references, not counted in scale_ratio. */
const CALLS: Record<string, () => Promise<unknown>> = {
  'admin stats': () => get('/admin-api/ai/stats'),
  'usage report (7 days)': () => get('/admin-api/ai/usage'),
  'usage per user (7 days)': () => get('/admin-api/ai/usage/users?userId=u7'),
  'admin list': () => fullPage('/admin-api/ai/jobs'),
  'admin list status=failed': () => fullPage('/admin-api/ai/jobs?status=failed'),
  'admin list type+status': () => fullPage('/admin-api/ai/jobs?jobType=quiz_generation&status=succeeded'),
  'admin list userId=u7': () => fullPage('/admin-api/ai/jobs?userId=u7'),
  "user's list": () => fullPage('/api/ai/jobs', userToken),
  "user's list status=succeeded": () => fullPage('/api/ai/jobs?status=succeeded', userToken),
  'create → succeeded': createToSucceeded,
  'retention pass': () => runRetention(getPrisma(), jobRegistry, DEFAULT_RETENTION, new Date()),
  'reaper pass': () => runReaper(reaper),
  '(old stats: full count)': () => Promise.all([
    getPrisma().$queryRawUnsafe('SELECT jobType, lifecycleStatus, COUNT(*) AS n FROM AiJob GROUP BY jobType, lifecycleStatus'),
    getPrisma().$queryRawUnsafe('SELECT status, COUNT(*) AS n FROM OutboxEvent GROUP BY status'),
  ]),
};

const reply = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
reply({ ready: true, n, calls: Object.keys(CALLS), seedSeconds, catchUpSeconds, bytesPerJob: { seeded: seededBytes / n, afterRetention: retainedBytes / n } });

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { call?: string; quit?: boolean };
  if (command.quit) break;
  const call = CALLS[command.call ?? ''];
  if (!call) throw new Error(`unknown call ${command.call}`);
  const before = await rowsRead();
  const start = performance.now();
  await call();
  const ms = performance.now() - start;
  const after = await rowsRead();
  reply({ ms, rows: before === null || after === null ? null : after - before });
}
await runtime.stop();
await emulators.stop();
await closePrisma();
await closeSqlPool();
if (userStats) await server.query('SET GLOBAL userstat = 0');
await server.query(`DROP USER IF EXISTS '${benchUser}'@'%'`);
if (!process.env.BENCH_KEEP) await server.query(`DROP DATABASE IF EXISTS ${database}`);
await server.end();
process.exit(0);
