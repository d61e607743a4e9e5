/**
 * Our engine in the benches: the runtime host child (./ours-host.ts), the waits between runs, and the figures
 * read back from the job rows (the ways in: ./http-clients.ts, and the host's `inproc` command).
 *
 * Clocks: created = the job row's `createdAt`, start = `startedAt`, done = `finishedAt` — all three written from
 * the runtime process's Node clock (`new Date()`, ms resolution) into DATETIME(3) columns (UTC: the pools'
 * timezone is 'Z') and subtracted in SQL. `createdAt` is taken inside createJob, after the HTTP request was
 * parsed, authenticated and checked against the limits: client send → createdAt is not in created → start.
 * Client submit → start subtracts the client's `Date.now()` before the request (./http-clients.ts) from
 * `startedAt` read as epoch ms: two readings of the same machine's clock, by two processes.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type mysql from 'mysql2/promise';
import { ENQUEUE_EVENT_TYPE, JOB_AGGREGATE } from '../../lib/outbox/outbox-writer.ts';
import type { RunFigures } from './load.ts';
import type { HostRequest } from './ours-host.ts';

type Command = HostRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export interface OursHost {
  url: string;
  /** The runtime process (for CPU accounting). */
  pid: number;
  request<T>(cmd: Command): Promise<T>;
  /**
   * The runtime's log lines since the last call, counted: JSON lines (Powertools, WARN and up) by level and
   * message, the local runtime's own text lines by their first words.
   */
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
  // The runtime's loggers write JSON lines (ERROR to stderr, the rest to stdout) and the local runtime text lines
  // to stdout: counted, kept off the bench's output. Other stderr text (a crash's stack) is echoed.
  let logCounts = new Map<string, number>();
  for (const [input, echo] of [[child.stdout!, undefined], [child.stderr!, process.stderr]] as const) {
    createInterface({ input }).on('line', (line) => {
      let key: string;
      try {
        const entry = JSON.parse(line) as { level?: string; message?: string };
        key = `${entry.level ?? '?'}: ${entry.message ?? line.slice(0, 80)}`;
      } catch {
        if (echo) {
          echo.write(`${line}\n`);
          return;
        }
        // A realtime publish problem's kind (failed, dropped) and reason, when the line carries them.
        const problem = /"kind":"(\w+)"(?:.*?"reason":"([^"]{0,40}))?/.exec(line);
        key = `text: ${line.split(' ').slice(0, 3).join(' ')}${problem ? ` (${problem.slice(1).filter(Boolean).join(': ')})` : ''}`;
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
  logCounts.clear();
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

/**
 * The run's figures from its job rows (see the module comment for the clocks). With `submitWallMs` (job i's
 * client submit instant on `Date.now()`, aligned with `ids`), jobs/s counts from the first submission, as the
 * peers' does, and `submitToStartMs` is filled; without it (createJob in process), from the first `createdAt`.
 */
export async function oursFigures(
  admin: mysql.Connection, database: string, ids: string[], base: Pick<RunFigures, 'system' | 'mode' | 'submitPerSecond' | 'offeredPerSecond'>,
  submitWallMs?: number[],
): Promise<RunFigures> {
  const rows: mysql.RowDataPacket[] = [];
  for (let at = 0; at < ids.length; at += 500) {
    const [chunk] = await admin.query<mysql.RowDataPacket[]>(
      `SELECT j.id AS id, j.lifecycleStatus AS status,
              TIMESTAMPDIFF(MICROSECOND, j.createdAt, j.startedAt) / 1000 AS toStart,
              TIMESTAMPDIFF(MICROSECOND, j.createdAt, o.publishedAt) / 1000 AS toSent,
              TIMESTAMPDIFF(MICROSECOND, j.createdAt, j.finishedAt) / 1000 AS toDone,
              TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', j.createdAt) / 1000 AS created,
              TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', j.startedAt) / 1000 AS started,
              TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', j.finishedAt) / 1000 AS finished
       FROM \`${database}\`.AiJob j
       LEFT JOIN \`${database}\`.OutboxEvent o ON o.aggregateType = ? AND o.aggregateId = j.id AND o.eventType = ?
       WHERE j.id IN (?)`, [JOB_AGGREGATE, ENQUEUE_EVENT_TYPE, ids.slice(at, at + 500)]);
    rows.push(...chunk);
  }
  const num = (v: unknown) => (v === null ? NaN : Number(v));
  const submitted = new Map(submitWallMs ? ids.map((id, i) => [id, submitWallMs[i]!]) : []);
  const first = submitWallMs ? Math.min(...submitWallMs) : Math.min(...rows.map((r) => num(r.created)));
  const last = Math.max(...rows.map((r) => num(r.finished)));
  return {
    ...base, jobs: ids.length, succeeded: rows.filter((r) => r.status === 'succeeded').length,
    jobsPerSecond: ids.length / ((last - first) / 1000),
    toStartMs: rows.map((r) => num(r.toStart)), toDoneMs: rows.map((r) => num(r.toDone)),
    toSentMs: rows.map((r) => num(r.toSent)),
    ...(submitWallMs ? { submitToStartMs: rows.map((r) => num(r.started) - (submitted.get(String(r.id)) ?? NaN)) } : {}),
  };
}

/** SHOW GLOBAL STATUS counter (server-wide: other clients of the server count too). */
export async function globalStatus(admin: mysql.Connection, name: string): Promise<number> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>('SHOW GLOBAL STATUS LIKE ?', [name]);
  return Number(rows[0]?.Value ?? NaN);
}
