/**
 * The stream Lambda's handler (`functions/api-stream.ts`): {@link STREAM_ROUTES} — a job's stream log after a
 * position, held open up to `wait` seconds when nothing follows it yet (lib/stream/long-poll.ts). A function of
 * its own: a held request outlives the API functions' 15 s timeout, and waiting readers must not take the user
 * API's concurrency. The owner route answers JOB_NOT_FOUND for another user's job (before holding anything); the
 * admin route reads any job. Reads only, on the raw pool (no Prisma in this function).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { ConfigurationError } from '../config/aws.ts';
import { getSqlPool, type SqlRunner } from '../db/sql-pool.ts';
import { JobNotFoundError } from '../jobs/lifecycle-errors.ts';
import { DEFAULT_READ_RESERVE_MS, READ_RESERVE_ENV, STREAM_POLL_INTERVAL_MS, readStreamWaiting } from '../stream/long-poll.ts';
import { readStreamHead, readStreamPage } from '../stream/stream-log.ts';
import { adminCallerOf, callerOf } from './auth.ts';
import { json, type ApiResult } from './http.ts';
import type { StreamQuery } from './request-schemas.ts';
import { createRouter, jobIdOf, type OperationContext } from './router.ts';
import { STREAM_ROUTES, type StreamAction, type StreamRoute } from './routes.ts';

export const STREAM_API_SERVICE = 'api-stream';

export interface StreamApiDeps {
  pool(): SqlRunner;
  pollIntervalMs: number;
  /** Kept back from the invocation's deadline before a read may start. */
  readReserveMs: number;
  now(): number;
  sleep?(ms: number): Promise<void>;
}

type Ctx = OperationContext<StreamApiDeps, StreamRoute>;

/** Reads the log for the caller, holding the request as `wait` asks; 404 when the job is not theirs to read. */
async function readLog(ctx: Ctx, mayRead: (job: { userId: string }) => boolean): Promise<ApiResult> {
  const { after, wait } = ctx.query as StreamQuery;
  const jobId = jobIdOf(ctx);
  const { deps } = ctx;
  const pool = deps.pool();
  const remaining = ctx.lambda?.getRemainingTimeInMillis?.();
  const read = await readStreamWaiting({
    after, waitMs: wait * 1000, pollIntervalMs: deps.pollIntervalMs, mayRead,
    readDeadline: remaining === undefined ? Number.POSITIVE_INFINITY : deps.now() + remaining - deps.readReserveMs,
    read: (position) => readStreamPage(jobId, position, { pool }),
    head: () => readStreamHead(jobId, pool),
    now: deps.now,
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
  });
  if (!read) throw new JobNotFoundError(jobId);
  return json(200, read.page);
}

/** One operation per stream action. */
export const STREAM_OPERATIONS: Record<StreamAction, (ctx: Ctx) => Promise<ApiResult>> = {
  streamJob: (ctx) => readLog(ctx, (job) => job.userId === ctx.caller.userId),
  adminStreamJob: (ctx) => readLog(ctx, () => true),
};

/** Defaults: the process's raw pool, the wall clock, the reserve from the environment. */
export function defaultStreamApiDeps(env: Readonly<Record<string, string | undefined>> = process.env): StreamApiDeps {
  return { pool: getSqlPool, pollIntervalMs: STREAM_POLL_INTERVAL_MS, readReserveMs: readReserveFromEnv(env), now: Date.now };
}

/** @throws ConfigurationError for a value that is not a whole number of milliseconds */
export function readReserveFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env[READ_RESERVE_ENV]?.trim();
  if (!raw) return DEFAULT_READ_RESERVE_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new ConfigurationError(READ_RESERVE_ENV, 'must be a whole number of milliseconds');
  return n;
}

/** The handler; `overrides` replace single dependencies (e.g. a shorter poll interval). */
export function createStreamApiHandler(overrides: Partial<StreamApiDeps> = {}, logger = new Logger({ serviceName: STREAM_API_SERVICE })) {
  let deps: StreamApiDeps | undefined;
  return createRouter({
    routes: STREAM_ROUTES,
    operations: STREAM_OPERATIONS,
    authenticate: (event, route) => (route.access === 'admin' ? adminCallerOf(event) : callerOf(event)),
    deps: () => (deps ??= { ...defaultStreamApiDeps(), ...overrides }),
    logger,
  });
}
