/**
 * `npm run bench:stream`: live jobs on the local runtime (docs/streaming.md), the mock provider streaming at
 * BENCH_STREAM_TPS tokens a second (default 50, as MOCK_AI_TOKENS_PER_SECOND would):
 *
 * 1. Database cost: every interactive consumer slot busy with a streaming job, MariaDB's general log on for the
 *    runtime's own database user (test/helpers/general-log.ts, as bench:peers): write statements per job by
 *    table; what streaming adds (the chunk appends) per second of a job's running time, and every job's own
 *    lifecycle writes (the same whether it streams or not), then all of them per second of running time.
 * 2. Latency: BENCH_STREAM_JOBS jobs, every interactive slot kept busy, each job's owner subscribed through the
 *    runtime's realtime hub: provider token → client, p50 and p99 over every text entry pushed (./stream-parts.ts).
 * 3. Fan-out: BENCH_STREAM_SUBSCRIBERS subscribers (default 1,000, each its own connection) to one user's jobs;
 *    one streaming job; every subscriber must receive every entry of its log once and in order (exit 1 otherwise).
 *
 * Env: DATABASE_URL (server; uses database `aijobs_bench_stream`), BENCH_STREAM_TPS, BENCH_STREAM_JOBS (24),
 * BENCH_STREAM_WORDS (feedback length, 60), BENCH_STREAM_SUBSCRIBERS. Last line: `stream_p50_ms=<p50>`.
 */
import mysql from 'mysql2/promise';
import { signLocalToken } from '../lib/api/local-jwt.ts';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../lib/db/database-url.ts';
import { CONSUMER_CONCURRENCY } from '../lib/dev/local-runtime/consumers.ts';
import { startLocalRuntime, type LocalRuntime } from '../lib/dev/local-runtime/runtime.ts';
import { startMockAiServer } from '../lib/dev/mock-ai-server.ts';
import { jobTypeMockResponder } from '../lib/dev/mock-responder.ts';
import { createRealtimeClient } from '../lib/client/realtime-client.ts';
import { ownerChannels } from '../lib/realtime/channel.ts';
import { ownerSegmentOfSubjectSync } from '../lib/realtime/server-channel.ts';
import type { StreamPush } from '../lib/stream/protocol.ts';
import { applyStreamEntries, emptyReaderState, type StreamReaderState } from '../lib/stream/reader-state.ts';
import { readStreamPage } from '../lib/stream/stream-log.ts';
import { createLoggedUser, dropLoggedUser, holdGeneralLog, releaseGeneralLog, serverNow, splitStatements } from '../test/helpers/general-log.ts';
import { TokenClock, benchAnswer, labelOf, percentile, subscribers, tally } from './stream-parts.ts';

const number = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const tps = number('BENCH_STREAM_TPS', 50);
const jobsToTime = number('BENCH_STREAM_JOBS', 24);
const words = number('BENCH_STREAM_WORDS', 60);
const fanoutSubscribers = number('BENCH_STREAM_SUBSCRIBERS', 1_000);
const slots = CONSUMER_CONCURRENCY.interactive;
const DATABASE = 'aijobs_bench_stream';

const url = withDatabase(databaseUrlFromEnv(), DATABASE);
const server = parseDatabaseUrl(url);
const admin = await mysql.createConnection({ host: server.host, port: server.port, user: server.user, password: server.password, multipleStatements: true });
await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}; CREATE DATABASE ${DATABASE}`);
const { user, password } = await createLoggedUser(admin, DATABASE);
const holder = `bench-stream-${process.pid}`;
await holdGeneralLog(admin, holder);
let logHeld = true;
const loggedFrom = await serverNow(admin);

const clock = new TokenClock();
const mock = await startMockAiServer({
  tokensPerSecond: tps, onToken: clock.onToken,
  respond: (ctx) => {
    const label = labelOf({ model: ctx.model, messages: ctx.messages });
    return label ? benchAnswer(label, words) : jobTypeMockResponder(ctx);
  },
});
const loggedUrl = new URL(url);
loggedUrl.username = user;
loggedUrl.password = password;
const runtime = await startLocalRuntime({ databaseUrl: loggedUrl.toString(), port: 0, useMoto: false, mockAiUrl: mock.url, realtimePort: 0, log: () => undefined });
let nextLabel = 0;

/** Creates a streaming job for `sub` and resolves with its id and label. */
async function create(token: string): Promise<{ jobId: string; label: string }> {
  const label = `stream-bench-job-${nextLabel++}`;
  const res = await fetch(`${runtime.url}/api/ai/feynman-evaluations`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ concept: label, explanation: 'Energy is conserved in a closed system.' }),
  });
  if (res.status !== 202) throw new Error(`create: HTTP ${res.status} ${await res.text()}`);
  return { jobId: ((await res.json()) as { jobId: string }).jobId, label };
}

async function untilFinished(jobIds: readonly string[]): Promise<void> {
  for (;;) {
    const [[row]] = await admin.query<mysql.RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM ${DATABASE}.AiJob WHERE id IN (?) AND lifecycleStatus IN ('queued', 'running')`, [jobIds]);
    if (Number(row?.n) === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Part 1: write statements per second per streaming job while every slot streams. */
async function databaseCost(tokens: string[]): Promise<{ all: number; appends: number; runningSeconds: number; perJob: { all: number; appends: number }; byTable: Map<string, number> }> {
  const start = await serverNow(admin);
  const jobs = await Promise.all(tokens.map((t) => create(t)));
  const ids = jobs.map((j) => j.jobId);
  await untilFinished(ids);
  const end = await serverNow(admin);
  const [rows] = await admin.query<mysql.RowDataPacket[]>(
    `SELECT CONVERT(argument USING utf8mb4) AS sql_ FROM mysql.general_log WHERE event_time BETWEEN ? AND ? AND command_type IN ('Query', 'Execute')
       AND thread_id IN (SELECT thread_id FROM mysql.general_log WHERE event_time >= ? AND command_type = 'Connect' AND argument LIKE ?)`,
    [start, end, loggedFrom, `${user}@%`]);
  await releaseGeneralLog(admin, holder);
  logHeld = false;
  const statements = rows.flatMap((r) => splitStatements(String(r.sql_)));
  const writes = statements.filter((s) => /^(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(s));
  const [[time]] = await admin.query<mysql.RowDataPacket[]>(
    `SELECT SUM(TIMESTAMPDIFF(MICROSECOND, startedAt, finishedAt)) / 1e6 AS s FROM ${DATABASE}.AiJob WHERE id IN (?)`, [ids]);
  const runningSeconds = Number(time?.s);
  const appends = writes.filter((s) => /AiJobStreamChunk/.test(s)).length;
  const byTable = new Map<string, number>();
  for (const w of writes) {
    const table = /^(?:INSERT\s+(?:IGNORE\s+)?INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+`?(\w+)/i.exec(w)?.[1] ?? '?';
    byTable.set(table, (byTable.get(table) ?? 0) + 1 / ids.length);
  }
  return { all: writes.length / runningSeconds, appends: appends / runningSeconds, runningSeconds, perJob: { all: writes.length / ids.length, appends: appends / ids.length }, byTable };
}

/** Part 2: provider token → subscribed client, every slot busy (each job's owner subscribed to all their jobs). */
async function latency(tokens: string[], subs: string[]): Promise<number[]> {
  const samples: number[] = [];
  const labels = new Map<string, string>();
  const views = new Map<string, StreamReaderState>();
  const onPush = (push: StreamPush) => {
    const now = performance.now();
    const before = views.get(push.jobId) ?? emptyReaderState();
    const after = applyStreamEntries(before, push.entries);
    views.set(push.jobId, after);
    const label = labels.get(push.jobId);
    const length = after.text.feedback?.length ?? 0;
    if (!label || length <= (before.text.feedback?.length ?? 0)) return;
    const written = clock.writtenAt(label, words, length - 1);
    if (written !== undefined) samples.push(now - written);
  };
  const clients = subs.map((sub, i) => createRealtimeClient({ httpEndpoint: runtime.realtime!.httpEndpoint, getToken: () => tokens[i]! }));
  await Promise.all(subs.map((sub, i) => new Promise<void>((resolve, reject) => {
    clients[i]!.subscribe(ownerChannels(ownerSegmentOfSubjectSync(sub)), { onSubscribed: resolve, onPush, onError: reject });
  })));
  let created = 0;
  await Promise.all(tokens.map(async (token) => {
    while (created < jobsToTime) {
      created += 1;
      const { jobId, label } = await create(token);
      labels.set(jobId, label);
      await untilFinished([jobId]);
    }
  }));
  for (const client of clients) client.close();
  return samples;
}

/** Part 3: every subscriber receives the whole log of a streaming job once, in order. */
async function fanout(rt: LocalRuntime): Promise<ReturnType<typeof tally> & { entries: number }> {
  const sub = 'stream-bench-fanout';
  const token = await signLocalToken(rt.jwtKey, { sub, ...rt.audience, expiresIn: '2h' });
  const subs = await subscribers(rt.realtime!.httpEndpoint, sub, token, fanoutSubscribers);
  try {
    const { jobId } = await create(token);
    await untilFinished([jobId]);
    const entries = (await readStreamPage(jobId, 0, { limit: 10_000 }))!.page.entries.length;
    // The last pushes may still be on their way to the last subscribers.
    const deadline = Date.now() + 30_000;
    let result = tally(subs.seqs, jobId, entries);
    while (result.complete < fanoutSubscribers && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      result = tally(subs.seqs, jobId, entries);
    }
    return { ...result, entries };
  } finally {
    subs.close();
  }
}

try {
  const subs = Array.from({ length: slots }, (_, i) => `stream-bench-${i}`);
  const tokens = await Promise.all(subs.map((sub) => signLocalToken(runtime.jwtKey, { sub, ...runtime.audience, expiresIn: '2h' })));
  const cost = await databaseCost(tokens);
  const tables = [...cost.byTable].sort((a, b) => b[1] - a[1]).map(([t, n]) => `${t} ${n.toFixed(1)}`).join(', ');
  console.log(`write statements per job by table: ${tables}`);
  console.log(`stream_writes_per_streaming_job_s=${cost.appends.toFixed(2)} (the chunk appends: what streaming adds) `
    + `lifecycle_writes_per_job=${(cost.perJob.all - cost.perJob.appends).toFixed(1)} (create, claim, status entries, projection: every job's, streaming or not) `
    + `all_writes_per_streaming_job_s=${cost.all.toFixed(2)} (${slots} jobs running ${cost.runningSeconds.toFixed(1)} s in all; general log)`);
  const samples = await latency(tokens, subs);
  const p50 = percentile(samples, 50);
  console.log(`stream_latency_ms p50=${p50.toFixed(1)} p99=${percentile(samples, 99).toFixed(1)} samples=${samples.length} jobs=${jobsToTime} slots=${slots} tps=${tps}`);
  const f = await fanout(runtime);
  console.log(`fanout_subscribers=${fanoutSubscribers} complete=${f.complete} missing=${f.missing} duplicates=${f.duplicates} out_of_order=${f.outOfOrder} entries=${f.entries}`);
  console.log(`stream_p50_ms=${p50.toFixed(1)}`);
  process.exitCode = f.complete === fanoutSubscribers ? 0 : 1;
} finally {
  if (logHeld) await releaseGeneralLog(admin, holder).catch(() => undefined);
  await runtime.stop();
  await mock.close();
  await dropLoggedUser(admin, user);
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  await admin.end();
}
