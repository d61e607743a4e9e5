/**
 * What the engine does when no route could take a job's call (lib/capacity/capacity-wait.ts): park the job
 * without spending an attempt, or end it.
 *
 * - Provider capacity (cooldown, window, calls in flight, slots kept for better-ranked jobs): the job waits until
 *   the refusal lifts, at most {@link MAX_CAPACITY_WAIT_MS} per waiting episode (15 min interactive, 6 h
 *   background; then it fails PROVIDER_CAPACITY).
 * - A spending cap: an interactive job ends at once with SPEND_LIMIT_REACHED (its caller is waiting for an answer
 *   and the cap resets at midnight UTC at the earliest); a background job waits for a daily cap's reset (midnight
 *   UTC) and ends with SPEND_LIMIT_REACHED for the monthly cap (a month is too long to hold a job).
 *
 * How it waits: through its message's visibility (one SQS receive per wait) while the message has used fewer than
 * CAPACITY_WAIT_RECEIVES waits and the wait is at most {@link MAX_VISIBILITY_WAIT_MS}; otherwise the job is handed to
 * a new message, sent by the dispatcher when the wait ends, and the current one is deleted. So a message never
 * spends more than CAPACITY_WAIT_RECEIVES receives on waiting, which the receive budget covers: nothing
 * dead-letters for waiting. Never by sleeping in a Lambda.
 */
import type { AiJob } from '../db/client.ts';
import { getSqlPool } from '../db/sql-pool.ts';
import type { JobDefinition, QueueName } from '../jobs/definition.ts';
import { markFailed, type LeaseFence } from '../jobs/lifecycle-repository.ts';
import { parkForCapacity } from '../jobs/lifecycle-wait.ts';
import { CAPACITY_WAIT_RECEIVES, SpendCapWaitError, type CapacityWaitError } from '../capacity/capacity-wait.ts';
import { DATABASE_CLOCK, withClock } from '../capacity/db-clock.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { RunOutcome } from './outcome.ts';

/** The longest a job waits for provider capacity in one episode, per queue. */
export const MAX_CAPACITY_WAIT_MS: Readonly<Record<QueueName, number>> = { interactive: 15 * 60_000, background: 6 * 3_600_000 };
/** Longer waits go to a new message sent when they end, rather than a hidden one. */
export const MAX_VISIBILITY_WAIT_MS = 15 * 60_000;
/** Spread over the first second of a window, so waiting jobs do not all come back at the same instant. */
const JITTER_MS = 1_000;

/** The waiting row as it stands before this wait. */
interface WaitState {
  waits: number;
  /** Milliseconds waited in the current episode (0: a new one). */
  waitedMs: number;
}

export async function settleCapacityWait(
  job: AiJob, def: JobDefinition, fence: LeaseFence, failure: CapacityWaitError, deps: EngineDeps,
): Promise<RunOutcome> {
  const queue = def.queue.queueName;
  if (failure instanceof SpendCapWaitError && (queue === 'interactive' || failure.scope === 'user_month')) {
    return fail(job, fence, failure, `spending cap ${failure.scope} reached`, deps);
  }
  const state = await readWaitState(job.id, deps);
  const spend = failure instanceof SpendCapWaitError;
  if (!spend && state.waitedMs + failure.retryInMs > MAX_CAPACITY_WAIT_MS[queue]) {
    return fail(job, fence, failure, `waited ${Math.round(state.waitedMs / 1000)} s for provider capacity; the limit is ${MAX_CAPACITY_WAIT_MS[queue] / 1000} s`, deps);
  }
  const waitMs = failure.retryInMs + (spend ? 0 : Math.floor(Math.random() * JITTER_MS));
  const handoff = spend || state.waits >= CAPACITY_WAIT_RECEIVES || failure.retryInMs > MAX_VISIBILITY_WAIT_MS;
  await parkForCapacity({
    jobId: job.id, fence, actor: deps.instanceId, waitingFor: failure.waitingFor, code: failure.code,
    route: spend ? null : failure.route, tokens: failure.tokens, waitMs, waits: handoff ? 0 : state.waits + 1,
    handoff: handoff ? { queueName: job.queueName } : null, clock: deps.capacityClock ?? DATABASE_CLOCK,
  });
  deps.logger.info('job parked', { jobId: job.id, waitingFor: failure.waitingFor, waitMs, handoff, detail: failure.message });
  if (handoff) return { kind: 'acknowledged', jobId: job.id, reason: 'handed_off' };
  return { kind: 'wait', jobId: job.id, code: failure.code, delayMs: waitMs };
}

async function readWaitState(jobId: string, deps: EngineDeps): Promise<WaitState> {
  const read = withClock(
    "SELECT waits, IF(reason = 'admitted', 0, TIMESTAMPDIFF(MICROSECOND, since, {now}) DIV 1000) AS waitedMs FROM `CapacityWait` WHERE jobId = ?",
    deps.capacityClock ?? DATABASE_CLOCK, [jobId],
  );
  const [row] = (await getSqlPool().query(read.sql, read.values)) as { waits: number; waitedMs: number }[];
  return { waits: Number(row?.waits ?? 0), waitedMs: Math.max(0, Number(row?.waitedMs ?? 0)) };
}

async function fail(job: AiJob, fence: LeaseFence, failure: CapacityWaitError, reason: string, deps: EngineDeps): Promise<RunOutcome> {
  await markFailed(deps.db, job.id, fence, {
    actor: deps.instanceId, reason, errorCode: failure.code,
    publicMessage: failure instanceof SpendCapWaitError ? 'A spending limit was reached; try again after it resets' : 'The AI provider stayed at capacity for too long; try again later',
    internalMessage: failure.message,
  });
  return { kind: 'failed', jobId: job.id, code: failure.code };
}
