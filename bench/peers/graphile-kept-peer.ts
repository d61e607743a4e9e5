/**
 * graphile-worker made to keep our guarantees (`graphile-worker-kept`): the same runner as ./graphile-peer.ts, but
 * every job writes in PostgreSQL, transaction for transaction, what ours writes in MariaDB (docs/performance.md,
 * "Where a job's database work goes"), so the two databases' CPU per job compare like with like. It answers one
 * question: how much of ours' database cost is the guarantees, and how much is the engine.
 *
 * - create, one transaction: the limits' guard (the user's active jobs, their jobs today, the spend reserved
 *   today), the job row on the user's idempotency key, its input snapshot, its audit row, `add_job` (graphile-
 *   worker's job row stands for our outbox row and its settle);
 * - lock, one transaction: the job to `running` under a new lease, its audit row, the snapshot read back;
 * - reservation, one transaction: the model's minute window and two spend counters (user and platform), each a
 *   guarded upsert, and a hold row;
 * - projection, one transaction: the stream log's chunks (the answer in pieces of {@link CHUNK_BYTES}, as the
 *   preview log stores it), the success claim (fenced on the lease, refused on a cancel request), its audit row,
 *   the hold settled and the window corrected to the tokens used, the ledger row, the result rows, the artifact
 *   and the terminal event's outbox row.
 * The provider's answer is asked for streamed (`stream: true`, usage included), as ours asks, and read with ours'
 * reader (lib/ai/chat-stream.ts), so the ~138 events of a quiz answer cost both sides the same reading; ours also
 * previews them for the live push.
 * Its clients submit over HTTP, as ours' do: an API in the peer's process (./http-front.ts) checks the bearer token
 * as ours' local authorizer does and the input with our definition's schema before the create's transaction.
 * Given the realtime hub's endpoint, it pushes every status change and the answer live as ours does, with ours'
 * publisher (lib/realtime/publisher.ts: signed, one request per push, to the job's channel): `queued` once its
 * create committed, `running` once its lock did, and the answer's chunks with `succeeded` once the projection
 * did (three requests a job, as ours makes for this workload).
 * What it still lacks: the events' publishing (their rows are written, never sent), the previews' parsing of the
 * answer into items, the credential checks, the admission wait of a job refused capacity, retry by class.
 */
import type pg from 'pg';
import { readChatStream } from '../../lib/ai/chat-stream.ts';
import { generateLocalJwtKey, signLocalToken } from '../../lib/api/local-jwt.ts';
import { newId } from '../../lib/db/ids.ts';
import { HttpStreamPublisher } from '../../lib/realtime/publisher.ts';
import { createEventsSigner } from '../../lib/realtime/sigv4.ts';
import { NO_STREAM_PUBLISHER, type StreamEntry, type StreamPublisher } from '../../lib/stream/protocol.ts';
import { graphileBase, inTransaction } from './graphile-base.ts';
import { requestJson } from './http-clients.ts';
import { startHttpFront } from './http-front.ts';
import { HUB_PUBLISHER } from './hub-publisher.ts';
import { mockClient, newTimings, type PeerPayload, type PeerTimings } from './peer-task.ts';
import { nowMs } from './load.ts';
import type { PeerSystem } from './peer-system.ts';
import type { BenchWorkload } from './workload.ts';

const TASK = 'bench_kept_job';
/** Bytes of the answer one stream chunk row holds. */
const CHUNK_BYTES = 1_000;
/** Generous limits: the guards are evaluated, never hit. */
const LIMITS = { activeJobs: 1_000_000, jobsPerDay: 1_000_000, tokensPerMinute: 1_000_000_000, spendPerDay: 1_000_000_000 };
const ESTIMATE = { tokens: 2_000, cost: 0.002 };
/** The issuer and audience of the tokens the peer's API accepts (its own key: ours' tokens are not valid here). */
const AUDIENCE = { issuer: 'bench-graphile-worker-kept', audience: 'bench-graphile-worker-kept' };

/** The tables of the guarantees (besides the workload's result table, ./peer-task.ts). */
export const KEPT_TABLES_SQL = `
  CREATE TABLE IF NOT EXISTS kept_job (id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, idem_key TEXT NOT NULL,
    job_type TEXT NOT NULL, status TEXT NOT NULL, lease INT NOT NULL DEFAULT 0, cancel_requested BOOLEAN NOT NULL DEFAULT false,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(), started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, UNIQUE (user_id, idem_key));
  CREATE INDEX IF NOT EXISTS kept_job_user_status ON kept_job (user_id, status);
  CREATE INDEX IF NOT EXISTS kept_job_user_created ON kept_job (user_id, created_at);
  CREATE TABLE IF NOT EXISTS kept_snapshot (job_id BIGINT PRIMARY KEY, input JSONB NOT NULL);
  CREATE TABLE IF NOT EXISTS kept_audit (job_id BIGINT NOT NULL, seq INT NOT NULL, to_status TEXT NOT NULL, actor TEXT NOT NULL,
    lease INT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (job_id, seq));
  CREATE TABLE IF NOT EXISTS kept_window (model TEXT NOT NULL, window_start TIMESTAMPTZ NOT NULL, tokens BIGINT NOT NULL,
    requests INT NOT NULL, PRIMARY KEY (model, window_start));
  CREATE TABLE IF NOT EXISTS kept_spend (scope TEXT NOT NULL, subject TEXT NOT NULL, day DATE NOT NULL, reserved NUMERIC NOT NULL,
    PRIMARY KEY (scope, subject, day));
  CREATE TABLE IF NOT EXISTS kept_hold (id BIGSERIAL PRIMARY KEY, job_id BIGINT NOT NULL, lease INT NOT NULL, model TEXT NOT NULL,
    window_start TIMESTAMPTZ NOT NULL, tokens INT NOT NULL, cost NUMERIC NOT NULL, settled_at TIMESTAMPTZ, UNIQUE (job_id, lease));
  CREATE TABLE IF NOT EXISTS kept_chunk (job_id BIGINT NOT NULL, seq INT NOT NULL, content TEXT NOT NULL, PRIMARY KEY (job_id, seq));
  CREATE TABLE IF NOT EXISTS kept_ledger (id BIGSERIAL PRIMARY KEY, job_id BIGINT NOT NULL, model TEXT NOT NULL,
    prompt_tokens INT NOT NULL, completion_tokens INT NOT NULL, cost NUMERIC NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now());
  CREATE INDEX IF NOT EXISTS kept_ledger_job ON kept_ledger (job_id);
  CREATE TABLE IF NOT EXISTS kept_artifact (job_id BIGINT PRIMARY KEY, output JSONB NOT NULL);
  CREATE TABLE IF NOT EXISTS kept_event (id BIGSERIAL PRIMARY KEY, job_id BIGINT NOT NULL, event_type TEXT NOT NULL,
    payload JSONB NOT NULL, published_at TIMESTAMPTZ);
  CREATE INDEX IF NOT EXISTS kept_event_unpublished ON kept_event (published_at, id);`;

/** graphile-worker's payload of a job: who and which (the input is the snapshot's); `channelId` names its live channel. */
interface KeptPayload { key: string; userId: string; jobId: string; channelId: string }

/** Throws unless `result` touched exactly one row: a guard or a fence that did not hold. */
function one(result: pg.QueryResult, what: string): pg.QueryResult {
  if (result.rowCount !== 1) throw new Error(`${what}: refused`);
  return result;
}

export async function startGraphileKeptPeer(o: {
  databaseUrl: string; mockAiUrl: string; workload: BenchWorkload; concurrency: number; clients: number;
  /** The local realtime hub's publish endpoint; without it nothing is pushed. */
  realtimeHttpEndpoint?: string | undefined;
}): Promise<PeerSystem> {
  const timings: PeerTimings = { ...newTimings(), created: new Map() };
  const http = o.realtimeHttpEndpoint
    ? new HttpStreamPublisher({ httpEndpoint: o.realtimeHttpEndpoint, sign: createEventsSigner(HUB_PUBLISHER.region, HUB_PUBLISHER.credentials) })
    : undefined;
  const publisher: StreamPublisher = http ?? NO_STREAM_PUBLISHER;
  const at = () => new Date().toISOString();
  const push = (p: KeptPayload, entries: StreamEntry[]) => publisher.publish({ userId: p.userId, jobId: p.channelId, entries });
  const ai = mockClient(o.mockAiUrl);
  const base = graphileBase('graphile-worker-kept', o);
  const { workerPool } = base;
  await workerPool.query(KEPT_TABLES_SQL);
  const model = 'mock-chat';

  async function handle(payload: KeptPayload): Promise<void> {
    if (!timings.started.has(payload.key)) timings.started.set(payload.key, nowMs());
    const { lease, input } = await inTransaction(workerPool, async (c) => {
      const locked = one(await c.query<{ lease: number }>(
        "UPDATE kept_job SET status = 'running', lease = lease + 1, started_at = now() WHERE id = $1 AND status IN ('queued', 'running') RETURNING lease",
        [payload.jobId]), 'lock');
      const leaseNow = locked.rows[0]!.lease;
      await c.query("INSERT INTO kept_audit (job_id, seq, to_status, actor, lease) VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM kept_audit WHERE job_id = $1), 'running', 'worker', $2)",
        [payload.jobId, leaseNow]);
      const { rows: [snapshot] } = await c.query<{ input: unknown }>('SELECT input FROM kept_snapshot WHERE job_id = $1', [payload.jobId]);
      return { lease: leaseNow, input: snapshot!.input };
    });
    push(payload, [{ seq: 2, attempt: lease, at: at(), type: 'status', status: 'running' }]);
    const { windowStart } = await inTransaction(workerPool, async (c) => {
      const { rows: [w] } = await c.query<{ window_start: Date }>(
        `INSERT INTO kept_window (model, window_start, tokens, requests) VALUES ($1, date_trunc('minute', now()), $2, 1)
         ON CONFLICT (model, window_start) DO UPDATE SET tokens = kept_window.tokens + EXCLUDED.tokens, requests = kept_window.requests + 1
         WHERE kept_window.tokens + EXCLUDED.tokens <= $3 RETURNING window_start`, [model, ESTIMATE.tokens, LIMITS.tokensPerMinute]);
      if (!w) throw new Error('reservation: the model is at its limit');
      for (const [scope, subject] of [['user', payload.userId], ['platform', 'all']] as const) {
        one(await c.query(
          `INSERT INTO kept_spend (scope, subject, day, reserved) VALUES ($1, $2, current_date, $3)
           ON CONFLICT (scope, subject, day) DO UPDATE SET reserved = kept_spend.reserved + EXCLUDED.reserved
           WHERE kept_spend.reserved + EXCLUDED.reserved <= $4`, [scope, subject, ESTIMATE.cost, LIMITS.spendPerDay]), `spend cap (${scope})`);
      }
      await c.query('INSERT INTO kept_hold (job_id, lease, model, window_start, tokens, cost) VALUES ($1, $2, $3, $4, $5, $6)',
        [payload.jobId, lease, model, w.window_start, ESTIMATE.tokens, ESTIMATE.cost]);
      return { windowStart: w.window_start };
    });
    const response = await ai.chat.completions.create({
      model, response_format: { type: 'json_object' }, stream: true, stream_options: { include_usage: true },
      messages: [{ role: 'system', content: o.workload.prompt.system }, { role: 'user', content: o.workload.prompt.render(input) }],
    }).asResponse();
    const { content, usage } = await readChatStream(response, { onFirstToken: () => undefined });
    const output = o.workload.outputSchema.parse(JSON.parse(content));
    o.workload.check(input, output);
    const used = { prompt: usage.promptTokens, completion: usage.completionTokens };
    const pieces = Buffer.from(content);
    const chunks: string[] = [];
    for (let at = 0; at < pieces.length; at += CHUNK_BYTES) chunks.push(pieces.subarray(at, at + CHUNK_BYTES).toString());
    await inTransaction(workerPool, async (c) => {
      await c.query(`INSERT INTO kept_chunk (job_id, seq, content) SELECT $1, s.seq, s.content FROM unnest($2::int[], $3::text[]) AS s(seq, content)`,
        [payload.jobId, chunks.map((_, i) => i + 10), chunks]);
      one(await c.query("UPDATE kept_job SET status = 'succeeded', finished_at = now() WHERE id = $1 AND lease = $2 AND status = 'running' AND NOT cancel_requested",
        [payload.jobId, lease]), 'success claim');
      await c.query("INSERT INTO kept_audit (job_id, seq, to_status, actor, lease) VALUES ($1, (SELECT MAX(seq) + 1 FROM kept_audit WHERE job_id = $1), 'succeeded', 'worker', $2)",
        [payload.jobId, lease]);
      one(await c.query('UPDATE kept_hold SET settled_at = now() WHERE job_id = $1 AND lease = $2 AND settled_at IS NULL', [payload.jobId, lease]), 'hold settlement');
      await c.query('UPDATE kept_window SET tokens = tokens - $3 WHERE model = $1 AND window_start = $2',
        [model, windowStart, ESTIMATE.tokens - used.prompt - used.completion]);
      await c.query('INSERT INTO kept_ledger (job_id, model, prompt_tokens, completion_tokens, cost) VALUES ($1, $2, $3, $4, $5)',
        [payload.jobId, model, used.prompt, used.completion, ESTIMATE.cost / 2]);
      const insert = o.workload.resultInsert({ system: 'graphile-worker-kept', key: payload.key, userId: payload.userId, input, output });
      await c.query(insert.sql, insert.values);
      await c.query('INSERT INTO kept_artifact (job_id, output) VALUES ($1, $2)', [payload.jobId, content]);
      await c.query("INSERT INTO kept_event (job_id, event_type, payload) VALUES ($1, 'ai.job.succeeded', $2)",
        [payload.jobId, JSON.stringify({ jobId: payload.jobId, userId: payload.userId })]);
    });
    push(payload, [
      ...chunks.map((delta, i): StreamEntry => ({ seq: 3 + i, attempt: lease, at: at(), type: 'text', field: 'answer', delta })),
      { seq: 3 + chunks.length, attempt: lease, at: at(), type: 'status', status: 'succeeded', resultUrl: `/jobs/${payload.channelId}` },
    ]);
    timings.done.set(payload.key, nowMs());
  }

  /** The create, one transaction: the limits' guard, the job on the user's key, its snapshot and audit row, add_job. */
  async function create(c: pg.PoolClient, r: { userId: string; idempotencyKey: string; input: unknown }): Promise<KeptPayload> {
    const { rows: [guard] } = await c.query<{ active: string; today: string; spent: string }>(
      `SELECT (SELECT COUNT(*) FROM kept_job WHERE user_id = $1 AND status IN ('queued', 'running')) AS active,
              (SELECT COUNT(*) FROM kept_job WHERE user_id = $1 AND created_at >= date_trunc('day', now())) AS today,
              (SELECT COALESCE(SUM(reserved), 0) FROM kept_spend WHERE day = current_date AND ((scope = 'user' AND subject = $1) OR (scope = 'platform' AND subject = 'all'))) AS spent`,
      [r.userId]);
    if (Number(guard!.active) >= LIMITS.activeJobs || Number(guard!.today) >= LIMITS.jobsPerDay || Number(guard!.spent) >= LIMITS.spendPerDay) {
      throw new Error('create: a limit is reached');
    }
    const { rows: [job] } = await c.query<{ id: string }>(
      "INSERT INTO kept_job (user_id, idem_key, job_type, status) VALUES ($1, $2, $3, 'queued') RETURNING id", [r.userId, r.idempotencyKey, o.workload.name]);
    await c.query('INSERT INTO kept_snapshot (job_id, input) VALUES ($1, $2)', [job!.id, JSON.stringify(r.input)]);
    await c.query("INSERT INTO kept_audit (job_id, seq, to_status, actor, lease) VALUES ($1, 1, 'queued', 'api', 0)", [job!.id]);
    const payload: KeptPayload = { key: r.idempotencyKey, userId: r.userId, jobId: job!.id, channelId: newId() };
    await c.query('SELECT graphile_worker.add_job($1, $2::json, max_attempts => $3)', [TASK, JSON.stringify(payload), o.workload.maxAttempts]);
    return payload;
  }

  const key = generateLocalJwtKey();
  const tokens = new Map<string, string>();
  const front = await startHttpFront({
    key, audience: AUDIENCE, inputSchema: o.workload.inputSchema,
    async create(r) {
      timings.created!.set(r.idempotencyKey, nowMs());
      const payload = await inTransaction(base.clientPool, (c) => create(c, r));
      push(payload, [{ seq: 1, attempt: 0, at: at(), type: 'status', status: 'queued' }]);
      return payload.channelId;
    },
  });

  await base.start(TASK, (payload) => handle(payload as KeptPayload));
  return {
    name: 'graphile-worker-kept',
    timings,
    servers: ['postgres'],
    // job, snapshot, 3 audit rows, hold, ledger, artifact, event, graphile-worker's job row (deleted when done).
    rowsPerJob: { inserted: 10, deleted: 1 },
    async prepareUsers(userIds) {
      for (const userId of userIds) {
        if (!tokens.has(userId)) tokens.set(userId, await signLocalToken(key, { sub: userId, ...AUDIENCE, expiresIn: '6h' }));
      }
    },
    async submit(payload: PeerPayload) {
      const token = tokens.get(payload.userId);
      if (!token) throw new Error(`graphile-worker-kept: no token for ${payload.userId} (prepareUsers first)`);
      const res = await requestJson('POST', `${front.url}/jobs`, token, JSON.stringify(o.workload.input(payload.runId, payload.i)), { 'idempotency-key': payload.key });
      if (res.status !== 202) throw new Error(`graphile-worker-kept create ${payload.key}: HTTP ${res.status} ${res.text}`);
    },
    async stop() {
      await front.close();
      await base.stop();
      await publisher.flush(2_000);
      const stats = http?.stats();
      if (stats) console.log(`graphile-worker-kept realtime publishes: published=${stats.published} failed=${stats.failed} dropped=${stats.dropped}`);
    },
  };
}
