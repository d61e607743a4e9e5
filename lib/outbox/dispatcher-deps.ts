/**
 * What a dispatcher runs with: database, routes, observability, identity and policy. Production code uses
 * {@link defaultDispatcherDeps} (environment configuration, one set per Lambda container); tests and the
 * benchmark build their own with {@link createDispatcherDeps}, e.g. with a clock moved past the lock TTL.
 */
import { hostname } from 'node:os';
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { ConfigurationError, createEventBridgeClient, createSqsClient, dispatchTargetsFromEnv } from '../config/aws.ts';
import { getPrisma, type Db } from '../db/client.ts';
import { getSqlPool, type SqlPool } from '../db/sql-pool.ts';
import { createOutboxRoutes, type OutboxRoutes } from './routes.ts';

/** The logging the dispatcher needs; Powertools' Logger fits. Attributes never include payloads. */
export interface DispatchLogger {
  info(message: string, ...attributes: LogAttributes[]): void;
  warn(message: string, ...attributes: LogAttributes[]): void;
  error(message: string, ...attributes: LogAttributes[]): void;
}

/** The metrics the dispatcher emits (counts); Powertools' Metrics fits. */
export interface DispatchMetrics {
  addMetric(name: string, unit: typeof MetricUnit.Count, value: number): unknown;
  publishStoredMetrics(): void;
}

/** Timing and limits of dispatch (ADR-003 §4.4). */
export interface DispatchPolicy {
  /** Rows claimed per cycle. */
  batchSize: number;
  /**
   * Claimed batches a scheduled run sends and settles at once while it claims the next (≥ 1). Each holds a
   * connection of the raw pool (its transaction holds the rows' locks) until it is settled.
   */
  batchesInFlight: number;
  /**
   * How long a claim outlives a dispatcher that stopped answering: a lease (`processing`) older than this is
   * released, and a held batch's session is dropped by the server after this long idle (whole seconds).
   * Must exceed `sendTimeoutMs`, so a live dispatcher always settles before its claim can expire.
   */
  lockTtlMs: number;
  /** Time budget of eager dispatch, which the creating request waits for; the scheduled run does the rest. */
  eagerTimeoutMs: number;
  /**
   * How long a new row waits behind this process's eager send in flight, to go out with others in the next
   * batch (./eager-batcher.ts); behind an older send it starts a send of its own.
   */
  eagerWaitMs: number;
  /**
   * Time budget of one cycle's sends: calls still in flight then are aborted and their rows settled as a
   * failed attempt, so an endpoint that hangs (rather than refuses) still counts towards `dead`.
   */
  sendTimeoutMs: number;
  /** Failed sends before a row is `dead` (and its job failed with DISPATCH_FAILED). */
  maxAttempts: number;
  /** Delay before retry number `attempt` (1 = after the first failure). */
  backoffMs(attempt: number): number;
  /** The dispatcher's clock: claims, TTLs and backoffs are all measured against it. */
  now(): Date;
}

/**
 * 500 rows per claim, 3 batches in flight, 60 s lock TTL, 2 s for eager dispatch (a new row waits at most 50 ms
 * behind the eager send in flight: one to fauxqs takes 1–5 ms), 3 attempts, backoff 5 s then 60 s: a
 * row whose eager dispatch failed is due again before the next scheduled run (so it goes out within about a
 * minute), and a row is only given up — failing its job — after its sends have failed for over a minute.
 * An SQS call takes milliseconds; 2 s is for a slow endpoint, not a normal one. The batch size amortises the
 * per-cycle statements (claim, job lookup, publish).
 */
export const DEFAULT_DISPATCH_POLICY: Readonly<DispatchPolicy> = {
  batchSize: 500,
  batchesInFlight: 3,
  lockTtlMs: 60_000,
  eagerTimeoutMs: 2_000,
  eagerWaitMs: 50,
  sendTimeoutMs: 15_000,
  maxAttempts: 3,
  backoffMs: (attempt) => Math.min(5_000 * 12 ** (attempt - 1), 15 * 60_000),
  now: () => new Date(),
};

/** Everything a dispatcher cycle or an eager dispatch runs with. */
export interface DispatcherDeps {
  /** Prisma, for the rare multi-step writes (giving a row up together with its job). */
  db: Db;
  /** The raw driver pool, for the statements of every cycle (claim, lookups, settle). Same database as `db`. */
  sql: SqlPool;
  routes: OutboxRoutes;
  logger: DispatchLogger;
  metrics: DispatchMetrics;
  /** Names this dispatcher in claim holders (`<instanceId>:<claim ulid>`), for logs and admin views. */
  instanceId: string;
  policy: DispatchPolicy;
}

/** Service name in logs and metrics. */
export const DISPATCHER_SERVICE = 'outbox-dispatcher';

/**
 * Fills in defaults: Powertools logger and metrics, `hostname:pid` instance id, the default policy, and the
 * process-wide raw pool for DATABASE_URL. A scheduled run needs one raw connection per batch in flight (a
 * claim's connection becomes its batch's, and the next claim waits for a free slot): 3 by default, which is
 * the dispatcher Lambda's DATABASE_CONNECTION_LIMIT (infra/app-functions.ts).
 * @throws ConfigurationError when the policy's send budget does not fit in its lock TTL.
 */
export function createDispatcherDeps(
  deps: Pick<DispatcherDeps, 'db' | 'routes'> & Partial<Omit<DispatcherDeps, 'policy'>> & { policy?: Partial<DispatchPolicy> },
): DispatcherDeps {
  const policy = { ...DEFAULT_DISPATCH_POLICY, ...deps.policy };
  if (!(policy.sendTimeoutMs < policy.lockTtlMs)) {
    throw new ConfigurationError('dispatch policy sendTimeoutMs', `(${policy.sendTimeoutMs} ms) must be below lockTtlMs (${policy.lockTtlMs} ms)`);
  }
  return {
    logger: deps.logger ?? new Logger({ serviceName: DISPATCHER_SERVICE }),
    metrics: deps.metrics ?? new Metrics({ namespace: 'AiJobs', serviceName: DISPATCHER_SERVICE }),
    instanceId: deps.instanceId ?? `dispatcher@${hostname()}:${process.pid}`,
    db: deps.db,
    sql: deps.sql ?? getSqlPool(),
    routes: deps.routes,
    policy,
  };
}

let shared: DispatcherDeps | undefined;

/**
 * The process-wide dependencies from the environment (DATABASE_URL, queue URLs, bus name, endpoints),
 * built on first use and reused for the container's life.
 * @throws ConfigurationError when a required variable is missing.
 */
export function defaultDispatcherDeps(): DispatcherDeps {
  if (shared) return shared;
  const targets = dispatchTargetsFromEnv();
  shared = createDispatcherDeps({
    db: getPrisma(),
    routes: createOutboxRoutes({ ...targets, sqs: createSqsClient(), eventBridge: createEventBridgeClient() }),
  });
  return shared;
}
