/**
 * The outbox dispatcher (ADR-003 §4): moves committed outbox rows to SQS and EventBridge, at least once,
 * with FIFO deduplication making SQS delivery effectively once.
 *
 * Two ways in:
 * - eager: {@link dispatchOutboxEventById}, called by the creating code right after its transaction commits;
 * - scheduled: {@link runScheduledDispatch}, the dispatcher Lambda every minute, which also catches every row
 *   eager dispatch missed (failed send, crash, lost claim).
 * Each cycle first releases expired leases (rows left in `processing` by an eager dispatch or a give-up that
 * never finished), then claims due rows by locking them in a transaction held while they are sent, and
 * settles them in that transaction (./held-claim.ts explains why and what a crash does).
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { Logger } from '@aws-lambda-powertools/logger';
import { newId } from '../db/ids.ts';
import { sendAndSettle, type SettleCounts } from './dispatch-batch.ts';
import { DISPATCHER_SERVICE, defaultDispatcherDeps, type DispatcherDeps } from './dispatcher-deps.ts';
import { abandonHeldBatch, claimDueOutboxBatch, type HeldOutboxBatch } from './held-claim.ts';
import { claimOutboxEventById, releaseExpiredOutboxLocks, type ClaimContext, type ClaimedOutboxEvent } from './outbox-claims.ts';
import type { KnownJob } from './routes.ts';
import { describeError } from './send-helpers.ts';
import { eagerBatcherOf, eagerHolder } from './eager-batcher.ts';

export { UNKNOWN_EVENT_TYPE } from './dispatch-batch.ts';
export { DISPATCH_FAILED } from './sqs-sender.ts';

/** Counts of one cycle. */
export interface CycleCounts extends SettleCounts {
  /** Abandoned `processing` rows returned to `pending` at the start of the cycle. */
  released: number;
  claimed: number;
}

/** Counts of a scheduled run (sums over its cycles). */
export interface DispatchRunSummary extends CycleCounts {
  cycles: number;
}

/** What eager dispatch did with the row: sent it, left it to someone else, or left it to the scheduled run. */
export type EagerDispatchResult = 'published' | 'skipped' | 'failed';

/** Time kept back from the Lambda's remaining time, so the last cycle never runs into the timeout. */
export const DEFAULT_SAFETY_MARGIN_MS = 10_000;

/** The shortest send budget a scheduled cycle gets. */
const MIN_SEND_BUDGET_MS = 1_000;

/**
 * One cycle: release expired locks, claim up to `batchSize` due rows, send them (within the policy's send
 * budget), settle them.
 */
export async function runDispatchCycle(deps: DispatcherDeps): Promise<CycleCounts> {
  return completeCycle(deps, await claimCycle(deps));
}

/** The database half of a cycle's start: expired leases released, then a batch claimed (locked). */
interface ClaimedCycle {
  started: number;
  released: number;
  batch: HeldOutboxBatch;
}

async function claimCycle(deps: DispatcherDeps): Promise<ClaimedCycle> {
  const started = Date.now();
  const now = deps.policy.now();
  const released = await releaseExpiredOutboxLocks(deps.sql, now);
  if (released > 0) deps.logger.warn('released outbox rows abandoned in processing', { released });
  const batch = await claimDueOutboxBatch(deps.sql, newClaim(deps, now), deps.policy.batchSize, deps.policy.lockTtlMs);
  return { started, released, batch };
}

/**
 * The rest of a cycle: send the claimed rows within the send budget, settle them (which commits the batch's
 * transaction), report. If anything fails first, the batch is rolled back: its rows are due again at once.
 */
async function completeCycle(deps: DispatcherDeps, cycle: ClaimedCycle, budgetMs = deps.policy.sendTimeoutMs): Promise<CycleCounts> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`sends exceeded the cycle's ${budgetMs} ms budget`)), budgetMs);
  let settled: SettleCounts;
  try {
    settled = await sendAndSettle(deps, { kind: 'held', batch: cycle.batch }, abort.signal);
  } finally {
    clearTimeout(timer);
    await abandonHeldBatch(cycle.batch); // a no-op once settled
  }
  const counts: CycleCounts = { released: cycle.released, claimed: cycle.batch.rows.length, ...settled };
  report(deps, counts, Date.now() - cycle.started, budgetMs);
  return counts;
}

/**
 * The scheduled run: one claimer, and up to `batchesInFlight` claimed batches being sent and settled at once,
 * so the next claim overlaps the previous batches' sends. Claims continue while the last one came back full
 * (more rows are probably due) and the next cycle fits in the remaining time minus a safety margin (as long as
 * the longest so far); each cycle's sends get `sendTimeoutMs`, cut to the time left before the margin.
 * Overlapping runs are safe: claims are disjoint.
 *
 * Why one claimer rather than several parallel claim→send→settle loops: concurrent claims make each other's
 * `SKIP LOCKED` scans step over rows the other holds, and with the sends overlapped the claimer is never the
 * wait (bench:dispatch: ~8% more rows/s than two independent loops).
 */
export async function runScheduledDispatch(
  deps: DispatcherDeps,
  time: { remainingTimeMs: () => number; safetyMarginMs?: number },
): Promise<DispatchRunSummary> {
  const margin = time.safetyMarginMs ?? DEFAULT_SAFETY_MARGIN_MS;
  const summary: DispatchRunSummary = { cycles: 0, released: 0, claimed: 0, published: 0, retried: 0, dead: 0, failed: 0 };
  let longestCycleMs = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  try {
    while (!failure && time.remainingTimeMs() - margin > longestCycleMs) {
      const cycle = await claimCycle(deps);
      // Its sends get the policy's budget, cut to the time left before the margin: a stalled send must not run
      // the function into its timeout (the margin covers the settle that follows).
      const budgetMs = Math.max(MIN_SEND_BUDGET_MS, Math.min(deps.policy.sendTimeoutMs, time.remainingTimeMs() - margin));
      const done: Promise<void> = completeCycle(deps, cycle, budgetMs).then((counts) => {
        longestCycleMs = Math.max(longestCycleMs, Date.now() - cycle.started);
        summary.cycles += 1;
        for (const key of Object.keys(counts) as (keyof CycleCounts)[]) summary[key] += counts[key];
      }, (error: unknown) => {
        failure ??= { error };
      }).finally(() => inFlight.delete(done));
      inFlight.add(done);
      if (cycle.batch.rows.length < deps.policy.batchSize) break; // drained for now
      while (inFlight.size >= deps.policy.batchesInFlight) await Promise.race(inFlight);
    }
  } finally {
    // Never return (or throw) with a batch still being sent: its rows would wait for the lock TTL.
    await Promise.all(inFlight);
  }
  if (failure) throw failure.error;
  // What is still waiting after the run: the OutboxBacklog alarm watches this (infra/alarms.ts).
  const backlog = await deps.db.outboxEvent.count({ where: { status: { in: ['pending', 'processing'] } } });
  deps.metrics.addMetric('OutboxBacklog', MetricUnit.Count, backlog);
  deps.metrics.publishStoredMetrics();
  deps.logger.info('dispatch run finished', { ...summary, backlog });
  return summary;
}

/**
 * Eager dispatch of one row: claim by id → send → settle. Never throws and never fails the caller's
 * request: any failure is logged and the row is left to the scheduled run (a failed send is back in
 * `pending` with a short backoff; a crash is released after the lock TTL).
 *
 * Bounded in time, because the caller (job creation, an API request) waits for it: after
 * `policy.eagerTimeoutMs` the sends still in flight are aborted and settled as a failed attempt, and the
 * call returns `failed` at the latest one second later even if the database does not answer (the claimed
 * row is then released after the lock TTL). A queue endpoint that accepts connections but never answers
 * thus delays a create by the budget, not until the API Gateway timeout.
 * @returns `published` when sent now, `skipped` when the row was not ours to send (not due, already
 *   claimed or sent), `failed` otherwise.
 */
export async function dispatchOutboxEventById(id: string, deps?: DispatcherDeps): Promise<EagerDispatchResult> {
  return runEager(id, deps, (resolved, signal) => dispatchOne(resolved, id, signal));
}

/**
 * Eager dispatch of a row its creating transaction inserted already claimed (`processing` under
 * `row.lockedBy`, leased until its `availableAt`): no claim round trip, and no job lookup — the creator
 * passes the two job columns the message needs. Same budget, result and failure handling as
 * {@link dispatchOutboxEventById}; a row never settled here is released when its lease ends and sent by the
 * scheduled run.
 */
export async function dispatchClaimedOutboxEvent(
  row: ClaimedOutboxEvent, job: KnownJob, deps?: DispatcherDeps,
): Promise<EagerDispatchResult> {
  // Coalesced with the other eager sends of this process (./eager-batcher.ts); the budget stays this row's.
  return runEager(row.id, deps, async (resolved, signal) => {
    const published = await eagerBatcherOf(resolved).submit(row, job, signal);
    return eagerResult(resolved, row.id, published ? 1 : 0, signal);
  });
}

/** The time budget, backstop, metrics and logging every eager dispatch shares. Never throws. */
async function runEager(
  id: string, deps: DispatcherDeps | undefined, attemptFn: (deps: DispatcherDeps, signal: AbortSignal) => Promise<EagerDispatchResult>,
): Promise<EagerDispatchResult> {
  let resolved: DispatcherDeps | undefined;
  const abort = new AbortController();
  const timers: NodeJS.Timeout[] = [];
  try {
    resolved = deps ?? defaultDispatcherDeps();
    const budgetMs = resolved.policy.eagerTimeoutMs;
    timers.push(setTimeout(() => abort.abort(new Error(`eager dispatch exceeded its ${budgetMs} ms budget`)), budgetMs));
    const attempt = attemptFn(resolved, abort.signal);
    const backstop = new Promise<never>((_, reject) => {
      timers.push(setTimeout(() => reject(new Error(`eager dispatch did not finish within ${budgetMs + 1_000} ms`)), budgetMs + 1_000));
    });
    attempt.catch(() => undefined); // after the backstop fired, a late failure has nobody to tell
    const result = await Promise.race([attempt, backstop]);
    resolved.metrics.addMetric(EAGER_METRICS[result], MetricUnit.Count, 1);
    resolved.metrics.publishStoredMetrics();
    return result;
  } catch (err) {
    const logger = resolved?.logger ?? new Logger({ serviceName: DISPATCHER_SERVICE });
    logger.error('eager dispatch failed; the scheduled dispatcher will send the row', { outboxId: id, error: describeError(err) });
    resolved?.metrics.addMetric(EAGER_METRICS.failed, MetricUnit.Count, 1);
    resolved?.metrics.publishStoredMetrics();
    return 'failed';
  } finally {
    for (const timer of timers) clearTimeout(timer);
  }
}

async function dispatchOne(deps: DispatcherDeps, id: string, signal: AbortSignal): Promise<EagerDispatchResult> {
  const row = await claimOutboxEventById(deps.sql, id, newClaim(deps, deps.policy.now()));
  if (!row) return 'skipped';
  const counts = await sendAndSettle(deps, { kind: 'lease', rows: [row], holder: row.lockedBy }, signal);
  return eagerResult(deps, id, counts.published, signal);
}

function eagerResult(deps: DispatcherDeps, id: string, published: number, signal: AbortSignal): EagerDispatchResult {
  if (published === 1) return 'published';
  if (signal.aborted) deps.logger.warn('eager dispatch ran out of time; the scheduled dispatcher will send the row', { outboxId: id });
  return 'failed';
}

/**
 * The claim a creating transaction writes into its new enqueue row, so eager dispatch needs no claim of its
 * own ({@link dispatchClaimedOutboxEvent}). Its lease covers the eager budget and its backstop, plus a margin.
 */
export function eagerClaim(deps: DispatcherDeps, now: Date): ClaimContext {
  return { holder: eagerHolder(deps), now, leaseUntil: new Date(now.getTime() + deps.policy.eagerTimeoutMs + EAGER_LEASE_MARGIN_MS) };
}

/** What an eager lease adds to the eager budget: the 1 s backstop and 2 s for the settle. */
const EAGER_LEASE_MARGIN_MS = 3_000;

const EAGER_METRICS: Record<EagerDispatchResult, string> = {
  published: 'EagerDispatchPublished', skipped: 'EagerDispatchSkipped', failed: 'EagerDispatchFailed',
};

/**
 * A new claim: a holder id unique to it (so a settle can only ever touch the claim that made it) and a lease
 * of the lock TTL, after which its rows are presumed abandoned.
 */
function newClaim(deps: DispatcherDeps, now: Date): ClaimContext {
  return { holder: `${deps.instanceId.slice(0, 100)}:${newId()}`, now, leaseUntil: new Date(now.getTime() + deps.policy.lockTtlMs) };
}

function report(deps: DispatcherDeps, counts: CycleCounts, durationMs: number, sendBudgetMs: number): void {
  const metricNames: Record<keyof CycleCounts, string> = {
    released: 'OutboxReleased', claimed: 'OutboxClaimed', published: 'OutboxPublished',
    retried: 'OutboxRetried', dead: 'OutboxDead', failed: 'OutboxFailed',
  };
  for (const key of Object.keys(metricNames) as (keyof CycleCounts)[]) {
    deps.metrics.addMetric(metricNames[key], MetricUnit.Count, counts[key]);
  }
  deps.metrics.publishStoredMetrics();
  if (counts.claimed > 0 || counts.released > 0) deps.logger.info('dispatch cycle', { ...counts, durationMs, sendBudgetMs });
}
