/**
 * What a peer's job handler does, the same for graphile-worker and BullMQ: ask the shared mock provider (the
 * `openai` SDK, as our provider client does) with the very prompt of the workload's job type (./workload.ts),
 * check the answer against that type's output schema and its projector's checks, and INSERT the result rows,
 * shaped as our projection's, into PostgreSQL in one statement (autocommit, one durable commit). Start and done
 * instants are taken on the Node clock ({@link nowMs}) in the handler.
 */
import OpenAI from 'openai';
import type pg from 'pg';
import { nowMs } from './load.ts';
import type { BenchWorkload } from './workload.ts';

export interface PeerPayload {
  key: string;
  runId: string;
  i: number;
  userId: string;
}

/** Per job key: first handler entry and result-row commit, Node clock. */
export interface PeerTimings {
  started: Map<string, number>;
  done: Map<string, number>;
  /**
   * A peer with an API in front (./http-front.ts) only: the instant before its create's transaction, after the
   * request was authenticated and validated, as ours' `createdAt` is taken inside createJob (./ours.ts).
   */
  created?: Map<string, number>;
}

export const newTimings = (): PeerTimings => ({ started: new Map(), done: new Map() });

/** The tables a peer writes: the business row of a request (graphile-worker's enqueue) and the workload's result rows. */
export function peerTablesSql(workload: BenchWorkload): string {
  return `
  CREATE TABLE IF NOT EXISTS peer_request (id BIGSERIAL PRIMARY KEY, system TEXT NOT NULL, job_key TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL, input JSONB NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now());
  ${workload.resultTableSql}`;
}

export function mockClient(mockAiUrl: string): OpenAI {
  return new OpenAI({ baseURL: mockAiUrl, apiKey: 'mock-key' });
}

/** The handler body: provider call, output checks, result rows. Idempotent on the job key (a retry writes no second set). */
export async function runPeerJob(
  system: string, workload: BenchWorkload, payload: PeerPayload, ai: OpenAI,
  query: (sql: string, values: unknown[]) => Promise<unknown>, timings: PeerTimings,
): Promise<void> {
  if (!timings.started.has(payload.key)) timings.started.set(payload.key, nowMs());
  const input = workload.input(payload.runId, payload.i);
  const reply = await ai.chat.completions.create({
    model: 'mock-chat', response_format: { type: 'json_object' },
    messages: [{ role: 'system', content: workload.prompt.system }, { role: 'user', content: workload.prompt.render(input) }],
  });
  const output = workload.outputSchema.parse(JSON.parse(reply.choices[0]?.message.content ?? ''));
  workload.check(input, output);
  const insert = workload.resultInsert({ system, key: payload.key, userId: payload.userId, input, output });
  await query(insert.sql, insert.values);
  timings.done.set(payload.key, nowMs());
}

/** Resolves when `n` jobs are done; rejects after `timeoutMs`. */
export async function waitForDone(timings: PeerTimings, n: number, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (timings.done.size < n) {
    if (Date.now() > deadline) throw new Error(`only ${timings.done.size} of ${n} peer jobs done after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Drops the database once the sessions of pools just ended have gone (pg-pool's end() resolves before its
 * sockets close; a forced drop would kill them mid-goodbye), forcing it after 5 s.
 */
export async function dropPostgresDatabase(Client: typeof pg.Client, baseUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: `${baseUrl}/postgres` });
  await client.connect();
  try {
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const { rows: [row] } = await client.query<{ n: string }>('SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = $1', [database]);
      if (Number(row?.n) === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Runs `sql` on a fresh client of the server's `postgres` database (CREATE/DROP DATABASE). */
export async function onPostgresServer(Client: typeof pg.Client, baseUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: `${baseUrl}/postgres` });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
