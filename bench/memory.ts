/**
 * `npm run bench:memory`: what memory a consumer Lambda needs, and the CPU it spends per job — the figures the
 * consumers' memory size and docs/deploy.md's cost table come from.
 *
 * What runs is the deployed code as Lambda runs it: each consumer (functions/consumer-interactive.ts,
 * functions/consumer-background.ts) bundled exactly as the stack bundles it (./lambda-bundle.ts), imported by
 * plain Node with the deployed NODE_OPTIONS in a process of its own (./memory/container.ts), and handed SQS
 * events one batch at a time, as Lambda's event source hands them to one container. The events are real: jobs
 * are created with createJob (eager dispatch into fauxqs), received from the queue with every system attribute
 * (MessageGroupId, ApproximateReceiveCount) and deleted afterwards unless the handler reported them failed. The
 * handler reaches MariaDB (DATABASE_URL), fauxqs (AWS_ENDPOINT_URL), the mock provider (MOCK_AI_BASE_URL,
 * streaming) and a local endpoint taking its realtime publishes (REALTIME_HTTP_ENDPOINT, signed as on AWS).
 * Not exercised: the Secrets Manager reads of a cold start (database URL, platform keys; one small response
 * each) — the keys come from the environment, as in local development.
 *
 * Per queue and per batch size L in BENCH_MEMORY_LEVELS (default 1,2,5,10; FIFO allows at most 10), a fresh
 * container handles BENCH_MEMORY_BATCHES (default 16) full batches of L jobs of the queue's mixed types
 * (./memory/workload.ts: one in eight at the schemas' limits, streamed). A batch's jobs are distinct message
 * groups, so the consumer runs them at once: L is the number of jobs in flight in one container. Printed:
 * - `cold`: the bundle's import (Lambda's INIT phase) — wall and CPU ms, RSS and heap after it;
 * - per level: peak RSS (the kernel's maxRSS), peaks of heapUsed / heapTotal / external / arrayBuffers
 *   (sampled every 20 ms), RSS after the first batch and at the end (growth over the run), CPU ms per job
 *   (the container's process, sampler excluded, first batch excluded: it carries the container's lazy setup),
 *   the first batch's CPU ms, the wall time per batch, and log bytes per job.
 * Last line: `consumer_peak_rss_mib=<largest peak RSS over every level run>`.
 *
 * Env: DATABASE_URL (server; the bench uses database BENCH_MEMORY_DATABASE, default `aijobs_bench_memory`), BENCH_MEMORY_LEVELS,
 * BENCH_MEMORY_BATCHES, BENCH_MEMORY_QUEUES (default interactive,background), BENCH_MEMORY_TPS (the mock's pace
 * for ordinary answers, tokens a second, default 200), BENCH_MEMORY_FIRST_TOKEN_MS (default 500),
 * BENCH_MEMORY_MAX_OLD_SPACE_MB (passed as --max-old-space-size to the containers: a heap held to what a small
 * function leaves it), BENCH_MEMORY_CPU_CGROUP (a cgroup v1 `cpu` directory the containers join, its quota set
 * beforehand, e.g. 18,090 µs per 100,000: 320 MB's share of a vCPU), BENCH_MEMORY_NODE_OPTIONS (instead of the deployed `--enable-source-maps`), BENCH_MEMORY_TRACE=1 (a line per batch: its job types, CPU and memory after it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import mysql from 'mysql2/promise';
import { LAMBDA_ENTRIES, PROJECT_ROOT } from '../infra/bundling.ts';
import { DB_POOL } from '../infra/app-functions.ts';
import { startMockAiServer } from '../lib/dev/mock-ai-server.ts';
import { deleteAcknowledged, toSqsEvent } from '../lib/dev/local-runtime/queue-poller.ts';
import type { CreatedJobQueue } from '../lib/queue/create-queues.ts';
import type { QueueName } from '../lib/queue/queue-definitions.ts';
import { bundleLambda } from './lambda-bundle.ts';
import { startContainer, type Container } from './memory/container.ts';
import { startBenchServices, startPublishSink } from './memory/services.ts';
import { benchJob, benchRespond } from './memory/workload.ts';

const env = process.env;
const list = (name: string, fallback: string) => (env[name]?.trim() || fallback).split(',').map((s) => s.trim()).filter(Boolean);
const LEVELS = list('BENCH_MEMORY_LEVELS', '1,2,5,10').map(Number);
const BATCHES = Number(env.BENCH_MEMORY_BATCHES ?? 16);
const QUEUES = list('BENCH_MEMORY_QUEUES', 'interactive,background') as QueueName[];
const MAX_OLD_SPACE = env.BENCH_MEMORY_MAX_OLD_SPACE_MB?.trim();
const TRACE = env.BENCH_MEMORY_TRACE === '1';
const DATABASE = env.BENCH_MEMORY_DATABASE?.trim() || 'aijobs_bench_memory';
/** The consumers' timeouts as infra/config.ts sets them (the handler reads its remaining time from them). */
const TIMEOUT_MS: Record<QueueName, number> = { interactive: 90_000, background: 300_000 };
const FUNCTION: Record<QueueName, 'ConsumerInteractive' | 'ConsumerBackground'> = { interactive: 'ConsumerInteractive', background: 'ConsumerBackground' };

const mib = (bytes: number) => (bytes / 1_048_576).toFixed(1);
const work = mkdtempSync(path.join(tmpdir(), 'bench-memory-'));

/** Receives up to `n` messages (one batch, as Lambda's poller would with batch size `n`). */
async function receiveBatch(sqs: SQSClient, queueUrl: string, n: number): Promise<Message[]> {
  const batch: Message[] = [];
  for (let empty = 0; batch.length < n && empty < 3;) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({
      QueueUrl: queueUrl, MaxNumberOfMessages: n - batch.length, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'],
    }));
    if (Messages.length === 0) empty += 1;
    batch.push(...Messages);
  }
  return batch;
}

interface Run { queue: QueueName; level: number; container: Container; queueInfo: CreatedJobQueue }

/** One container handling BATCHES batches of `level` jobs; prints its line; resolves with its peak RSS. */
async function runLevel(r: Run, sqs: SQSClient, admin: mysql.Connection, createdIds: string[]): Promise<number> {
  const { queue, level, container } = r;
  const batches: { wallMs: number; cpuMs: number; rss: number; jobs: number }[] = [];
  for (;;) {
    const messages = await receiveBatch(sqs, r.queueInfo.queueUrl, level);
    if (messages.length === 0) break;
    const done = await container.invoke<SQSBatchResponse>(toSqsEvent(messages, r.queueInfo.queueArn));
    await deleteAcknowledged(sqs, r.queueInfo.queueUrl, messages, done.response);
    batches.push({ wallMs: done.wallMs, cpuMs: done.cpuMs, rss: done.memory.rss, jobs: messages.length });
    if (TRACE) {
      const m = done.memory;
      const types = messages.map((msg) => (JSON.parse(msg.Body ?? '{}') as { jobType?: string }).jobType).join(',');
      console.log(`#   batch ${batches.length} [${types}] cpu_ms=${done.cpuMs.toFixed(0)} rss=${mib(m.rss)} heap_used=${mib(m.heapUsed)} external=${mib(m.external)} array_buffers=${mib(m.arrayBuffers)}`);
    }
  }
  const report = await container.report();
  const [rows] = await admin.query<mysql.RowDataPacket[]>(
    `SELECT lifecycleStatus AS s, COUNT(*) AS n FROM ${DATABASE}.AiJob WHERE id IN (?) GROUP BY lifecycleStatus`, [createdIds]);
  const states = rows.map((row) => `${row.s}:${row.n}`).join(',');
  const rest = batches.slice(1);
  const jobs = rest.reduce((n, b) => n + b.jobs, 0);
  const cpuPerJob = rest.reduce((n, b) => n + b.cpuMs, 0) / Math.max(1, jobs);
  const wallPerBatch = rest.reduce((n, b) => n + b.wallMs, 0) / Math.max(1, rest.length);
  const p = report.peaks;
  console.log(`queue=${queue} batch=${level} batches=${batches.length} jobs=${createdIds.length} states=${states}`
    + ` peak_rss_mib=${mib(report.maxRssBytes)} peak_heap_used_mib=${mib(p.heapUsed)} peak_heap_total_mib=${mib(p.heapTotal)}`
    + ` peak_external_mib=${mib(p.external)} peak_array_buffers_mib=${mib(p.arrayBuffers)}`
    + ` rss_after_first_mib=${mib(batches[0]?.rss ?? 0)} rss_end_mib=${mib(report.memory.rss)}`
    + ` cpu_ms_per_job=${cpuPerJob.toFixed(1)} first_batch_cpu_ms=${(batches[0]?.cpuMs ?? 0).toFixed(0)}`
    + ` wall_ms_per_batch=${wallPerBatch.toFixed(0)} log_bytes_per_job=${Math.round(container.logBytes() / createdIds.length)}`);
  return report.maxRssBytes;
}

async function main(): Promise<void> {
  const services = await startBenchServices(DATABASE, 'bench-memory');
  const { url, admin, endpoint, sqs, queues } = services;
  const mock = await startMockAiServer({
    tokensPerSecond: Number(env.BENCH_MEMORY_TPS ?? 200), firstTokenDelayMs: Number(env.BENCH_MEMORY_FIRST_TOKEN_MS ?? 500), respond: benchRespond,
  });
  const sink = await startPublishSink();
  const lambdaEnv: Record<string, string> = {
    STAGE: 'bench', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_ENDPOINT_URL: endpoint,
    INTERACTIVE_QUEUE_URL: queues.interactive.queueUrl, BACKGROUND_QUEUE_URL: queues.background.queueUrl,
    EVENT_BUS_NAME: 'bench', CREDENTIALS_KMS_KEY_ID: 'alias/bench', DATABASE_URL: url,
    MOCK_AI_BASE_URL: mock.url, REALTIME_HTTP_ENDPOINT: sink.url,
  };
  // createJob below dispatches eagerly into fauxqs, as the API function does.
  // Its metrics (EMF lines on stdout) are the API's, not the consumer's: off in this process.
  Object.assign(process.env, { ...lambdaEnv, DATABASE_CONNECTION_LIMIT: '4', POWERTOOLS_METRICS_DISABLED: 'true' });
  const { createJob } = await import('../lib/jobs/create-job.ts');
  const nodeOptions: Record<string, string> = env.BENCH_MEMORY_NODE_OPTIONS === undefined ? {} : { NODE_OPTIONS: env.BENCH_MEMORY_NODE_OPTIONS };
  const execArgv = MAX_OLD_SPACE ? [`--max-old-space-size=${MAX_OLD_SPACE}`] : [];
  console.log(`# node ${process.version}, levels ${LEVELS.join(',')}, ${BATCHES} batches each, mock ${env.BENCH_MEMORY_TPS ?? 200} tokens/s`
    + ` (first token ${env.BENCH_MEMORY_FIRST_TOKEN_MS ?? 500} ms)${MAX_OLD_SPACE ? `, --max-old-space-size=${MAX_OLD_SPACE}` : ''}`);
  let peak = 0;
  let nextJob = 0;
  try {
    for (const queue of QUEUES) {
      const bundle = await bundleLambda(path.join(PROJECT_ROOT, LAMBDA_ENTRIES[FUNCTION[queue]].entry), path.join(work, queue));
      for (const level of LEVELS) {
        const ids: string[] = [];
        for (let i = 0; i < BATCHES * level; i += 1) {
          const job = benchJob(queue, nextJob++);
          const userId = `bench-memory-user-${nextJob}`;
          ids.push((await createJob({ userId, jobType: job.jobType, triggerType: 'user', targetType: 'user', targetId: userId, input: job.input })).job.id);
        }
        const container = await startContainer(path.join(bundle, 'index.mjs'),
          { ...lambdaEnv, DATABASE_CONNECTION_LIMIT: String(DB_POOL.consumer(level)), ...nodeOptions }, TIMEOUT_MS[queue], execArgv);
        try {
          if (level === LEVELS[0]) {
            const l = container.loaded;
            console.log(`cold fn=${FUNCTION[queue]} import_ms=${l.importMs.toFixed(0)} import_cpu_ms=${l.importCpuMs.toFixed(0)}`
              + ` process_cpu_ms=${l.processCpuMs.toFixed(0)} rss_mib=${mib(l.memory.rss)} heap_used_mib=${mib(l.memory.heapUsed)}`
              + ` external_mib=${mib(l.memory.external)}`);
          }
          peak = Math.max(peak, await runLevel({ queue, level, container, queueInfo: queues[queue] }, sqs, admin, ids));
        } finally {
          await container.stop();
        }
      }
    }
    console.log(`# realtime publishes taken: ${sink.requests()}`);
    console.log(`consumer_peak_rss_mib=${mib(peak)}`);
  } finally {
    await Promise.all([mock.close(), sink.close(), services.stop()]);
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
