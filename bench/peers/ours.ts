/**
 * Our engine in the peers bench: the runtime host child (./ours-host.ts), the two ways in (HTTP API with local
 * JWTs; createJob in the runtime's process), and the figures read back from the job rows.
 *
 * Clocks: submit = the job row's `createdAt`, start = `startedAt`, done = `finishedAt` — all three written from
 * the runtime process's Node clock (`new Date()`, ms resolution) into DATETIME(3) columns and subtracted in SQL,
 * so no time zone or cross-process clock enters. `createdAt` is taken inside createJob, after the HTTP request
 * was parsed, authenticated and checked against the limits: client send → createdAt is not in "start".
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type mysql from 'mysql2/promise';
import { ENQUEUE_EVENT_TYPE, JOB_AGGREGATE } from '../../lib/outbox/outbox-writer.ts';
import { offerLoad, type LoadPlan, type RunFigures } from './load.ts';
import { benchInput, BENCH_JOB_PATH } from './ours-workload.ts';
import type { HostRequest } from './ours-host.ts';

type Command = HostRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export interface OursHost {
  url: string;
  /** The runtime process (for CPU accounting). */
  pid: number;
  request<T>(cmd: Command): Promise<T>;
  /** The runtime's JSON log lines (Powertools, WARN and up) since the last call, counted by level and message. */
  takeLogCounts(): Map<string, number>;
  /** Stops the runtime (in-flight jobs finish, bounded) and waits for the process to exit. */
  stop(): Promise<void>;
}

/** BENCH_HOST_NODE_FLAGS: extra node flags for the runtime host and the emulators (experiments). */
export function hostNodeFlags(): string[] {
  return process.env.BENCH_HOST_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
}

/** Forks ./ours-host.ts on `databaseUrl`; resolves when its runtime serves HTTP. */
export async function startOursHost(databaseUrl: string, endpoints: object): Promise<OursHost> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./ours-host.ts', import.meta.url)), [databaseUrl, JSON.stringify(endpoints)], {
    execArgv: ['--import', 'tsx', ...hostNodeFlags(), ...(process.env.BENCH_CPU_PROF_HOST ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_HOST}`] : [])], stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // The runtime's loggers write JSON lines (ERROR to stderr, the rest to stdout): counted, kept off the bench's output.
  let logCounts = new Map<string, number>();
  for (const [input, echo] of [[child.stdout!, process.stdout], [child.stderr!, process.stderr]] as const) {
    createInterface({ input }).on('line', (line) => {
      let key: string;
      try {
        const entry = JSON.parse(line) as { level?: string; message?: string };
        key = `${entry.level ?? '?'}: ${entry.message ?? line.slice(0, 80)}`;
      } catch {
        echo.write(`${line}\n`);
        return;
      }
      logCounts.set(key, (logCounts.get(key) ?? 0) + 1);
    });
  }
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once('exit', (code) => {
    for (const p of pending.values()) p.reject(new Error(`runtime host exited (${code})`));
    pending.clear();
    resolve();
  }));
  const ready = new Promise<{ url: string }>((resolve, reject) => pending.set(0, { resolve: resolve as (v: unknown) => void, reject }));
  child.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.ok) p?.resolve(m.result);
    else p?.reject(new Error(`runtime host: ${m.error}`));
  });
  const { url } = await ready;
  const request = <T>(cmd: Command) => new Promise<T>((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
    child.send({ ...cmd, id });
  });
  return {
    url,
    pid: child.pid!,
    request,
    takeLogCounts() {
      const taken = logCounts;
      logCounts = new Map();
      return taken;
    },
    async stop() {
      await request({ cmd: 'stop' });
      await exited;
    },
  };
}

/**
 * The clients' HTTP: node:http on a keep-alive agent, one socket per client. The clients stand in for apps on
 * other machines but share this machine's two cores with the system under test, so they should cost little:
 * `fetch` (undici) took about 1.4 ms of CPU per request here, more than twice what this takes.
 */
const clientAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function postJson(url: string, token: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST', agent: clientAgent,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Every job of the run submitted through `POST /api/ai/feynman-evaluations`, user i % tokens.length. */
export async function submitOverHttp(host: OursHost, tokens: string[], plan: LoadPlan, runId: string) {
  const ids: string[] = [];
  const load = await offerLoad(plan, async (i) => {
    const res = await postJson(`${host.url}${BENCH_JOB_PATH}`, tokens[i % tokens.length]!, JSON.stringify(benchInput(runId, i)));
    if (res.status !== 202) throw new Error(`create ${i}: HTTP ${res.status} ${res.text}`);
    ids[i] = (JSON.parse(res.text) as { jobId: string }).jobId;
  });
  return { load, ids };
}

/** Waits (polling the side connection) until no job of the database is queued or running. */
export async function waitForOursIdle(admin: mysql.Connection, database: string, timeoutMs = 600_000): Promise<void> {
  await waitForZero(admin, `SELECT COUNT(*) AS n FROM \`${database}\`.AiJob WHERE lifecycleStatus IN ('queued', 'running')`, timeoutMs);
}

/**
 * Waits until every outbox row is settled: the terminal events are published by the scheduled dispatcher
 * (every 2 s locally), after the jobs finished. Between runs, so one run's events are not the next run's load.
 */
export async function waitForOutboxSettled(admin: mysql.Connection, database: string, timeoutMs = 60_000): Promise<void> {
  await waitForZero(admin, `SELECT COUNT(*) AS n FROM \`${database}\`.OutboxEvent WHERE status IN ('pending', 'processing')`, timeoutMs);
}

async function waitForZero(admin: mysql.Connection, countSql: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [[row]] = await admin.query<mysql.RowDataPacket[]>(countSql);
    if (Number(row?.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`still not zero after ${timeoutMs} ms: ${countSql}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The run's figures from its job rows (see the module comment for the clocks). */
export async function oursFigures(admin: mysql.Connection, database: string, ids: string[], base: Pick<RunFigures, 'system' | 'mode' | 'submitPerSecond' | 'offeredPerSecond'>): Promise<RunFigures> {
  const rows: mysql.RowDataPacket[] = [];
  for (let at = 0; at < ids.length; at += 500) {
    const [chunk] = await admin.query<mysql.RowDataPacket[]>(
      `SELECT j.lifecycleStatus AS status,
              TIMESTAMPDIFF(MICROSECOND, j.createdAt, j.startedAt) / 1000 AS toStart,
              TIMESTAMPDIFF(MICROSECOND, j.createdAt, o.publishedAt) / 1000 AS toSent,
              TIMESTAMPDIFF(MICROSECOND, j.createdAt, j.finishedAt) / 1000 AS toDone,
              TIMESTAMPDIFF(MICROSECOND, '2000-01-01', j.createdAt) / 1000 AS created,
              TIMESTAMPDIFF(MICROSECOND, '2000-01-01', j.finishedAt) / 1000 AS finished
       FROM \`${database}\`.AiJob j
       LEFT JOIN \`${database}\`.OutboxEvent o ON o.aggregateType = ? AND o.aggregateId = j.id AND o.eventType = ?
       WHERE j.id IN (?)`, [JOB_AGGREGATE, ENQUEUE_EVENT_TYPE, ids.slice(at, at + 500)]);
    rows.push(...chunk);
  }
  const num = (v: unknown) => (v === null ? NaN : Number(v));
  const first = Math.min(...rows.map((r) => num(r.created)));
  const last = Math.max(...rows.map((r) => num(r.finished)));
  return {
    ...base, jobs: ids.length, succeeded: rows.filter((r) => r.status === 'succeeded').length,
    jobsPerSecond: ids.length / ((last - first) / 1000),
    toStartMs: rows.map((r) => num(r.toStart)), toDoneMs: rows.map((r) => num(r.toDone)),
    toSentMs: rows.map((r) => num(r.toSent)),
  };
}

/** SHOW GLOBAL STATUS counter (server-wide: other clients of the server count too). */
export async function globalStatus(admin: mysql.Connection, name: string): Promise<number> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>('SHOW GLOBAL STATUS LIKE ?', [name]);
  return Number(rows[0]?.Value ?? NaN);
}
