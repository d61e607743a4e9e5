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
 * Env: DATABASE_URL (server; database BENCH_MEMORY_DATABASE, default `aijobs_bench_memory_api`), BENCH_MEMORY_API_REQUESTS,
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
import { startContainer } from './memory/container.ts';
import { startBenchServices, startPublishSink } from './memory/services.ts';
import { workloadFromEnv } from './peers/workload.ts';

const env = process.env;
const ROUNDS = Number(env.BENCH_MEMORY_API_REQUESTS ?? 600);
const DATABASE = env.BENCH_MEMORY_DATABASE?.trim() || 'aijobs_bench_memory_api';
/** API_FUNCTION_TIMEOUT_SECONDS of infra/app-functions.ts. */
const TIMEOUT_MS = 29_000;
const WORKLOAD = workloadFromEnv();
const mib = (bytes: number) => (bytes / 1_048_576).toFixed(1);

/** An HTTP API (payload 2.0) event as API Gateway sends it after its JWT authorizer accepted `sub`'s token. */
function apiEvent(method: string, rawPath: string, sub: string, body?: unknown, query?: Record<string, string>) {
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
      authorizer: { principalId: '', integrationLatency: 0, jwt: { claims: { sub, iss: 'https://issuer.example.com', aud: 'ai-jobs', exp: String(Math.floor(now.getTime() / 1000) + 3600) }, scopes: [] } },
    },
  };
}

type Answer = { statusCode?: number; body?: string };

async function main(): Promise<void> {
  const services = await startBenchServices(DATABASE, 'bench-memory-api');
  const { url, admin, endpoint, queues } = services;
  const sink = await startPublishSink();
  const work = mkdtempSync(path.join(tmpdir(), 'bench-memory-api-'));
  try {
    const bundle = await bundleLambda(path.join(PROJECT_ROOT, LAMBDA_ENTRIES.ApiUser.entry), path.join(work, 'api-user'));
    const container = await startContainer(path.join(bundle, 'index.mjs'), {
      STAGE: 'bench', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_ENDPOINT_URL: endpoint,
      INTERACTIVE_QUEUE_URL: queues.interactive.queueUrl, BACKGROUND_QUEUE_URL: queues.background.queueUrl,
      CREDENTIALS_KMS_KEY_ID: 'alias/bench', DATABASE_URL: url, DATABASE_CONNECTION_LIMIT: String(DB_POOL.api),
      REALTIME_HTTP_ENDPOINT: sink.url,
    }, TIMEOUT_MS, env.BENCH_MEMORY_MAX_OLD_SPACE_MB ? [`--max-old-space-size=${env.BENCH_MEMORY_MAX_OLD_SPACE_MB}`] : []);
    const l = container.loaded;
    console.log(`cold fn=ApiUser import_ms=${l.importMs.toFixed(0)} import_cpu_ms=${l.importCpuMs.toFixed(0)} rss_mib=${mib(l.memory.rss)} heap_used_mib=${mib(l.memory.heapUsed)}`);
    const statuses = new Map<string, number>();
    let cpu = 0;
    let requests = 0;
    let rssAfterFirst = 0;
    let firstCpu = 0;
    for (let i = 0; i < ROUNDS; i += 1) {
      const sub = `bench-memory-api-${i}`;
      const call = async (event: unknown) => {
        const done = await container.invoke<Answer>(event);
        const key = `${(event as { routeKey: string }).routeKey} ${done.response.statusCode}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (i > 0) {
          cpu += done.cpuMs;
          requests += 1;
        } else {
          firstCpu += done.cpuMs;
        }
        return done;
      };
      const created = await call(apiEvent('POST', WORKLOAD.path, sub, WORKLOAD.input('api', i)));
      const id = (JSON.parse(created.response.body ?? '{}') as { jobId?: string; id?: string }).jobId ?? (JSON.parse(created.response.body ?? '{}') as { id?: string }).id;
      if (id) await call(apiEvent('GET', `/api/ai/jobs/${id}`, sub));
      const listed = await call(apiEvent('GET', '/api/ai/jobs', sub, undefined, { limit: '20' }));
      if (i === 0) rssAfterFirst = listed.memory.rss;
    }
    const report = await container.report();
    await container.stop();
    const p = report.peaks;
    console.log(`requests=${ROUNDS * 3} statuses=${[...statuses].map(([k, n]) => `${k.replaceAll(' ', '_')}:${n}`).join(',')}`);
    console.log(`peak_rss_mib=${mib(report.maxRssBytes)} peak_heap_used_mib=${mib(p.heapUsed)} peak_heap_total_mib=${mib(p.heapTotal)}`
      + ` peak_external_mib=${mib(p.external)} rss_after_first_mib=${mib(rssAfterFirst)} rss_end_mib=${mib(report.memory.rss)}`
      + ` cpu_ms_per_request=${(cpu / Math.max(1, requests)).toFixed(2)} first_round_cpu_ms=${firstCpu.toFixed(0)}`);
    console.log(`api_peak_rss_mib=${mib(report.maxRssBytes)}`);
  } finally {
    await sink.close();
    await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
    await services.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
