/**
 * `npm run bench:memory-api`: what memory the user API Lambda (ApiUser) needs, and its CPU per request — the
 * figures its memory size in infra/app-functions.ts and the API part of docs/deploy.md's cost table come from.
 *
 * As bench/memory.ts does for the consumers: functions/api-user.ts bundled exactly as the stack bundles it
 * (./lambda-bundle.ts), imported by plain Node with the deployed NODE_OPTIONS in a process of its own
 * (./memory/container.ts), and handed API Gateway HTTP API events (payload 2.0, the JWT authorizer's claims)
 * one at a time, as API Gateway hands them to one container. The handler reaches MariaDB (DATABASE_URL), fauxqs
 * (eager dispatch of every created job) and a local endpoint taking its realtime publishes (signed as on AWS).
 *
 * BENCH_MEMORY_API_REQUESTS (default 600) rounds of three requests, each by a user of its own: create a job of
 * bench:peers' workload (BENCH_WORKLOAD; quiz generation, `count: 2`, by default), read it back, list the user's jobs. Printed: `cold`
 * (import wall and CPU ms, RSS after it), then peak RSS (the kernel's maxRSS), peaks of heap and external memory,
 * RSS after the first round and at the end, CPU ms per request after the first round, the first round's CPU (a new
 * container's first requests: the database URL, the pools, Prisma's client, compiling hot code), and the status
 * codes seen.
 * Last line: `api_peak_rss_mib=…`.
 *
 * BENCH_MEMORY_API_FN=ApiAdmin measures the admin API (functions/api-admin.ts) instead, on a database seeded with
 * BENCH_MEMORY_ADMIN_JOBS (100,000) finished jobs of bench:scale's history (./scale-seed.ts: 197 users, 90 days),
 * the scheduled maintenance caught up on them (rollups, retention) as it would be when deployed:
 * rounds of nine requests by an admin — stats (with the queues' and dead-letter queues' depths), the job list
 * unfiltered, by status, by user and by job type, one job's detail, usage over a week, usage by user, and the
 * budgets — each round on another user and job. Last line: `admin_peak_rss_mib=…`.
 *
 * Env: DATABASE_URL (server; database BENCH_MEMORY_DATABASE, default `aijobs_bench_memory_api`), BENCH_MEMORY_API_REQUESTS,
 * BENCH_MEMORY_MAX_SEMI_SPACE_MB (--max-semi-space-size: V8's young generation, which otherwise grows with the machine),
 * BENCH_MEMORY_MAX_OLD_SPACE_MB (--max-old-space-size for the container: whether a growing heap is garbage V8 has
 * not collected yet or memory the function keeps).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LAMBDA_ENTRIES, PROJECT_ROOT } from '../infra/bundling.ts';
import { DB_POOL } from '../infra/app-functions.ts';
import { bundleLambda } from './lambda-bundle.ts';
import { catchUpMaintenance, seedFinishedJobs, USERS } from './scale-seed.ts';
import { createPrismaClient } from '../lib/db/client.ts';
import { startContainer } from './memory/container.ts';
import { startBenchServices, startPublishSink } from './memory/services.ts';
import { workloadFromEnv } from './peers/workload.ts';

const env = process.env;
const ROUNDS = Number(env.BENCH_MEMORY_API_REQUESTS ?? 600);
const DATABASE = env.BENCH_MEMORY_DATABASE?.trim() || 'aijobs_bench_memory_api';
/** API_FUNCTION_TIMEOUT_SECONDS of infra/app-functions.ts. */
const TIMEOUT_MS = 29_000;
const WORKLOAD = workloadFromEnv();
const FN_NAME = env.BENCH_MEMORY_API_FN?.trim() || 'ApiUser';
if (FN_NAME !== 'ApiUser' && FN_NAME !== 'ApiAdmin') throw new Error(`BENCH_MEMORY_API_FN must be ApiUser or ApiAdmin, not ${JSON.stringify(FN_NAME)}`);
const FN: 'ApiUser' | 'ApiAdmin' = FN_NAME;
const ADMIN_JOBS = Number(env.BENCH_MEMORY_ADMIN_JOBS ?? 100_000);
if (!Number.isInteger(ADMIN_JOBS) || ADMIN_JOBS < 1_000) throw new Error('BENCH_MEMORY_ADMIN_JOBS must be an integer of at least 1000');
const mib = (bytes: number) => (bytes / 1_048_576).toFixed(1);

/** An HTTP API (payload 2.0) event as API Gateway sends it after its JWT authorizer accepted `sub`'s token. */
function apiEvent(method: string, rawPath: string, sub: string, body?: unknown, query?: Record<string, string>, extraClaims: Record<string, string> = {}) {
  const now = new Date();
  const routeKey = `${method} ${rawPath.replace(/\/[0-9A-HJKMNP-TV-Z]{26}$/, '/{jobId}')}`;
  return {
    version: '2.0', routeKey, rawPath, rawQueryString: query ? new URLSearchParams(query).toString() : '',
    headers: { 'content-type': 'application/json', host: 'api.example.com' },
    ...(query ? { queryStringParameters: query } : {}),
    ...(/\/[0-9A-HJKMNP-TV-Z]{26}$/.test(rawPath) ? { pathParameters: { jobId: rawPath.split('/').at(-1)! } } : {}),
    ...(body === undefined ? {} : { body: JSON.stringify(body), isBase64Encoded: false }),
    requestContext: {
      accountId: '000000000000', apiId: 'bench', domainName: 'api.example.com', domainPrefix: 'api',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: randomUUID(), routeKey, stage: '$default', time: now.toUTCString(), timeEpoch: now.getTime(),
      authorizer: { principalId: '', integrationLatency: 0, jwt: { claims: { sub, iss: 'https://issuer.example.com', aud: 'ai-jobs', exp: String(Math.floor(now.getTime() / 1000) + 3600), ...extraClaims }, scopes: [] } },
    },
  };
}

type Answer = { statusCode?: number; body?: string };

/** An admin's request (the default admin claim and group, as API Gateway's authorizer passes a Cognito group). */
const adminEvent = (method: string, rawPath: string, query?: Record<string, string>) =>
  apiEvent(method, rawPath, 'bench-admin', undefined, query, { 'cognito:groups': '[SUPER_ADMIN]' });

/** Round `i` of the admin workload: nine reads, on user and job `i` of the seeded history. */
function adminRound(i: number): unknown[] {
  const user = `u${i % USERS}`;
  const job = `00${String((i * 7919) % ADMIN_JOBS).padStart(24, '0')}`;
  const types = ['quiz_generation', 'feynman_evaluation', 'flashcard_generation'];
  return [
    adminEvent('GET', '/admin-api/ai/stats'),
    adminEvent('GET', '/admin-api/ai/jobs', { limit: '50' }),
    adminEvent('GET', '/admin-api/ai/jobs', { status: i % 2 ? 'failed' : 'succeeded', limit: '50' }),
    adminEvent('GET', '/admin-api/ai/jobs', { userId: user, limit: '50' }),
    adminEvent('GET', '/admin-api/ai/jobs', { jobType: types[i % 3]!, limit: '50' }),
    adminEvent('GET', `/admin-api/ai/jobs/${job}`),
    adminEvent('GET', '/admin-api/ai/usage'),
    adminEvent('GET', '/admin-api/ai/usage/users', { userId: user }),
    adminEvent('GET', '/admin-api/ai/budgets', { userId: user }),
  ];
}

async function main(): Promise<void> {
  const services = await startBenchServices(DATABASE, 'bench-memory-api');
  const { url, admin, endpoint, queues } = services;
  const sink = await startPublishSink();
  const work = mkdtempSync(path.join(tmpdir(), 'bench-memory-api-'));
  try {
    if (FN === 'ApiAdmin') {
      await admin.query(`USE ${DATABASE}`);
      const seeded = Date.now();
      await seedFinishedJobs(admin, ADMIN_JOBS);
      // As deployed, the scheduled maintenance keeps the rollups the stats and usage reports read up to date.
      const db = createPrismaClient(url);
      await catchUpMaintenance(db);
      await db.$disconnect();
      console.log(`seeded jobs=${ADMIN_JOBS} (rollups caught up) seconds=${((Date.now() - seeded) / 1000).toFixed(1)}`);
    }
    const bundle = await bundleLambda(path.join(PROJECT_ROOT, LAMBDA_ENTRIES[FN].entry), path.join(work, FN));
    const container = await startContainer(path.join(bundle, 'index.mjs'), {
      STAGE: 'bench', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_ENDPOINT_URL: endpoint,
      INTERACTIVE_QUEUE_URL: queues.interactive.queueUrl, BACKGROUND_QUEUE_URL: queues.background.queueUrl,
      INTERACTIVE_DLQ_URL: queues.interactive.deadLetterQueueUrl, BACKGROUND_DLQ_URL: queues.background.deadLetterQueueUrl,
      CREDENTIALS_KMS_KEY_ID: 'alias/bench', DATABASE_URL: url, DATABASE_CONNECTION_LIMIT: String(DB_POOL.api),
      REALTIME_HTTP_ENDPOINT: sink.url,
    }, TIMEOUT_MS, [
      ...(env.BENCH_MEMORY_MAX_OLD_SPACE_MB ? [`--max-old-space-size=${env.BENCH_MEMORY_MAX_OLD_SPACE_MB}`] : []),
      ...(env.BENCH_MEMORY_MAX_SEMI_SPACE_MB ? [`--max-semi-space-size=${env.BENCH_MEMORY_MAX_SEMI_SPACE_MB}`] : []),
    ]);
    const l = container.loaded;
    console.log(`cold fn=${FN} import_ms=${l.importMs.toFixed(0)} import_cpu_ms=${l.importCpuMs.toFixed(0)} rss_mib=${mib(l.memory.rss)} heap_used_mib=${mib(l.memory.heapUsed)}`);
    const statuses = new Map<string, number>();
    let cpu = 0;
    let requests = 0;
    let total = 0;
    let rssAfterFirst = 0;
    let firstCpu = 0;
    for (let i = 0; i < ROUNDS; i += 1) {
      const sub = `bench-memory-api-${i}`;
      const call = async (event: unknown) => {
        const done = await container.invoke<Answer>(event);
        const key = `${(event as { routeKey: string }).routeKey} ${done.response.statusCode}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        total += 1;
        if (i > 0) {
          cpu += done.cpuMs;
          requests += 1;
        } else {
          firstCpu += done.cpuMs;
        }
        return done;
      };
      if (FN === 'ApiAdmin') {
        let last: Awaited<ReturnType<typeof call>> | undefined;
        for (const event of adminRound(i)) last = await call(event);
        if (i === 0) rssAfterFirst = last!.memory.rss;
        continue;
      }
      const created = await call(apiEvent('POST', WORKLOAD.path, sub, WORKLOAD.input('api', i)));
      const id = (JSON.parse(created.response.body ?? '{}') as { jobId?: string; id?: string }).jobId ?? (JSON.parse(created.response.body ?? '{}') as { id?: string }).id;
      if (id) await call(apiEvent('GET', `/api/ai/jobs/${id}`, sub));
      const listed = await call(apiEvent('GET', '/api/ai/jobs', sub, undefined, { limit: '20' }));
      if (i === 0) rssAfterFirst = listed.memory.rss;
    }
    const report = await container.report();
    await container.stop();
    const p = report.peaks;
    console.log(`requests=${total} statuses=${[...statuses].map(([k, n]) => `${k.replaceAll(' ', '_')}:${n}`).join(',')}`);
    console.log(`peak_rss_mib=${mib(report.maxRssBytes)} peak_heap_used_mib=${mib(p.heapUsed)} peak_heap_total_mib=${mib(p.heapTotal)}`
      + ` peak_external_mib=${mib(p.external)} rss_after_first_mib=${mib(rssAfterFirst)} rss_end_mib=${mib(report.memory.rss)}`
      + ` cpu_ms_per_request=${(cpu / Math.max(1, requests)).toFixed(2)} first_round_cpu_ms=${firstCpu.toFixed(0)}`);
    console.log(`${FN === 'ApiAdmin' ? 'admin' : 'api'}_peak_rss_mib=${mib(report.maxRssBytes)}`);
  } finally {
    await sink.close();
    await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
    await services.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
