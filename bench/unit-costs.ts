/**
 * `npm run bench:unit-costs`: what one unit of the per-job work costs in CPU on this machine, measured alone,
 * so the peers bench's per-job figures (bench/peers.ts, ±5% between rounds) can be explained by counts × unit
 * costs, and a proposed cut can be priced before it is built.
 *
 * - MariaDB through our raw pool (lib/db/sql-pool.ts): a bare round trip; a single-row UPDATE as its own
 *   autocommit transaction; the same UPDATE added to a transaction that runs anyway (no trip or commit of its
 *   own). Client CPU (this process) and server CPU (mariadbd, from /proc) per operation.
 * - SQS through the SDK against fauxqs: SendMessageBatch of one entry, default client and with
 *   `cacheMiddleware`; ReceiveMessage + DeleteMessageBatch; and the floor: the same request over bare node:http.
 * - The provider call: our OpenAI-compatible provider (the openai SDK's request, the event stream read and folded)
 *   against the mock with bench:peers' prompt (its answer streams as ~138 events), then the same request,
 *   unstreamed, over fetch and over bare node:http.
 * - One local JWT verification (the local runtime's stand-in for API Gateway's authorizer).
 *
 * Client figures are this process's CPU; fauxqs and the mock run in a child process (bench/emulators.ts),
 * whose CPU is printed apart. BENCH_OPS (default 3,000) operations per figure, after 300 untimed ones.
 */
import http from 'node:http';
import mysql from 'mysql2/promise';
import { CreateQueueCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { OpenAiCompatibleProvider } from '../lib/ai/openai-compatible-provider.ts';
import { generateLocalJwtKey, signLocalToken, verifyLocalToken } from '../lib/api/local-jwt.ts';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../lib/db/database-url.ts';
import { createSqlPool } from '../lib/db/sql-pool.ts';
import { pidsNamed, processCpuMs } from './peers/cpu.ts';
import { startEmulators } from './peers/emulator-process.ts';
import { workloadFromEnv } from './peers/workload.ts';

const OPS = Number(process.env.BENCH_OPS ?? 3_000);
const WARMUP = 300;

interface Cost { client: number; server?: number; serverName?: string }
const rows: [string, Cost][] = [];

/** Runs `op` WARMUP times untimed, then OPS times; CPU ms per op of this process and of `serverPids`. */
async function measure(label: string, op: (i: number) => Promise<unknown>, server?: { name: string; pids: () => number[] }): Promise<void> {
  for (let i = 0; i < WARMUP; i++) await op(i);
  const serverMs = () => (server?.pids() ?? []).reduce((ms, pid) => ms + (processCpuMs(pid) ?? 0), 0);
  const s0 = serverMs();
  const c0 = process.cpuUsage();
  for (let i = 0; i < OPS; i++) await op(WARMUP + i);
  const c = process.cpuUsage(c0);
  const cost: Cost = { client: (c.user + c.system) / 1000 / OPS };
  if (server) Object.assign(cost, { server: (serverMs() - s0) / OPS, serverName: server.name });
  rows.push([label, cost]);
  console.log(`${label.padEnd(58)} client ${cost.client.toFixed(3)} ms/op${cost.server === undefined ? '' : `   ${cost.serverName} ${cost.server.toFixed(3)} ms/op`}`);
}

// ---- MariaDB ----------------------------------------------------------------------------------------------
const DB = 'aijobs_bench_unit_costs';
const url = withDatabase(databaseUrlFromEnv(), DB);
const s = parseDatabaseUrl(url);
const admin = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password, multipleStatements: true });
await admin.query(`DROP DATABASE IF EXISTS ${DB}; CREATE DATABASE ${DB}; USE ${DB};
  CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL, status VARCHAR(16) NOT NULL, KEY t_status (status, n));
  INSERT INTO t SELECT seq, 0, 'processing' FROM seq_1_to_1000`);
const pool = createSqlPool(`${url}?connectionLimit=1`);
const mariadb = { name: 'mariadbd', pids: () => pidsNamed('mariadbd') };
const row = (i: number) => (i % 1000) + 1;
const flip = "UPDATE t SET n = n + 1, status = IF(status = 'processing', 'published', 'processing') WHERE id = ?";
await measure('db: round trip (SELECT 1)', () => pool.query('SELECT 1'), mariadb);
await measure('db: transaction of one UPDATE (a trip and a commit)', (i) => pool.query(flip, [row(i)]), mariadb);
await measure('db: transaction of two UPDATEs', (i) => pool.query(`START TRANSACTION; UPDATE t SET n = n + 1 WHERE id = ?; ${flip}; COMMIT`, [row(i + 500), row(i)]), mariadb);
await measure('db: transaction of one UPDATE, as START…COMMIT', (i) => pool.query('START TRANSACTION; UPDATE t SET n = n + 1 WHERE id = ?; COMMIT', [row(i + 500)]), mariadb);
await pool.end();
await admin.query(`DROP DATABASE ${DB}`);
await admin.end();

// ---- SQS and the provider, on the bench emulators -----------------------------------------------------------
// The shared launcher (bench/emulators.ts exits when its stdin closes: a child spawned without a stdin pipe exits at once).
const emulators = await startEmulators();
const { endpoints } = emulators;
const emu = { name: 'emulators', pids: () => [emulators.pid] };
process.env.AWS_ACCESS_KEY_ID ??= 'bench';
process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
const body = JSON.stringify({ jobId: '01J00000000000000000000000', jobType: 'feynman_evaluation', idempotencyKey: 'ai.job.enqueue:01J00000000000000000000000', createdAt: new Date().toISOString() });
for (const [label, options] of [['default client', {}], ['cacheMiddleware', { cacheMiddleware: true }]] as const) {
  const sqs = new SQSClient({ region: 'us-east-1', endpoint: endpoints.sqsEndpoint, ...options });
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `unit-${label.replace(/\W/g, '')}.fifo`, Attributes: { FifoQueue: 'true' } }));
  const entry = (i: number) => ({ Id: '0', MessageBody: body, MessageGroupId: `g${i}`, MessageDeduplicationId: `d${i}` });
  await measure(`sqs: SendMessageBatch of 1, SDK, ${label}`, (i) => sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: [entry(i)] })), emu);
  await measure(`sqs: ReceiveMessage + DeleteMessageBatch, SDK, ${label}`, async () => {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }));
    if (Messages.length > 0) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl, Entries: Messages.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle! })) }));
  }, emu);
  sqs.destroy();
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
/** A POST over bare node:http (keep-alive), the floor any client library adds to. */
function post(target: string, payload: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(target, { method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => { JSON.parse(Buffer.concat(chunks).toString()); resolve(); });
    });
    req.on('error', reject);
    req.end(payload);
  });
}
await measure('sqs: the same SendMessageBatch over bare node:http (unsigned)', (i) => post(endpoints.sqsEndpoint, JSON.stringify({
  QueueUrl: `${endpoints.sqsEndpoint}/000000000000/unit-defaultclient.fifo`, Entries: [{ Id: '0', MessageBody: body, MessageGroupId: `g${i}`, MessageDeduplicationId: `r${i}` }],
}), { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessageBatch', authorization: 'AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00' }), emu);

const provider = new OpenAiCompatibleProvider({ name: 'mock', baseURL: endpoints.mockAiUrl });
const workload = workloadFromEnv();
const input = workload.input('unit-costs', 0);
const messages = [{ role: 'system' as const, content: workload.prompt.system }, { role: 'user' as const, content: workload.prompt.render(input) }];
const signal = new AbortController().signal;
await measure('provider: streamed chat completion, our provider', () => provider.complete({ model: 'mock-chat', messages, jsonMode: true }, { apiKey: 'mock-key', signal }), emu);
const chat = JSON.stringify({ model: 'mock-chat', messages, stream: false, response_format: { type: 'json_object' } });
const chatHeaders = { 'content-type': 'application/json', authorization: 'Bearer mock-key' };
await measure('provider: the same request over fetch', () => fetch(`${endpoints.mockAiUrl}/chat/completions`, { method: 'POST', headers: chatHeaders, body: chat }).then((r) => r.json()), emu);
await measure('provider: the same request over bare node:http', () => post(`${endpoints.mockAiUrl}/chat/completions`, chat, chatHeaders), emu);
await emulators.stop();
agent.destroy();

// ---- the local authorizer ------------------------------------------------------------------------------------
const key = generateLocalJwtKey();
const audience = { issuer: 'bench', audience: 'bench' };
const token = await signLocalToken(key, { sub: 'bench-user', ...audience });
await measure('jwt: one local token verification (HS256, jose)', () => verifyLocalToken(key, token, audience));
process.exit(0);
