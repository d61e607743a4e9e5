/**
 * Bounds one delivery and keeps its message moving when the platform fails (issue: nothing stuck):
 * - an error escaping the engine (the database unreachable while taking the lease, settling or projecting)
 *   is logged and the message made visible again after a short backoff, instead of staying hidden for the
 *   queue's whole visibility timeout (9–30 min);
 * - a delivery that outlives its job's timeout plus a margin (a hung database call, a provider call that
 *   ignores its abort) is abandoned: its attempt is aborted — the provider call, the lease keeper (no new
 *   heartbeat, so the lease can expire), and visibility is no longer extended — and then the guard WAITS for
 *   the run to stop, at most `stopBudgetMs()` (the invocation's remaining time less the consumer's reserve).
 *
 * Why wait. On Lambda nothing runs between invocations: work left running when the handler returns freezes
 * with the container, mid-statement, holding its lease. The redelivery then finds the lease held and is
 * acknowledged, and only the reaper recovers the job, minutes later. A run that stops in time has settled
 * (an abandoned attempt is the platform's failure: lease released, attempt given back), so the message that
 * comes back a few seconds later runs at once. The run's outcome, however late, is the delivery's outcome:
 * an answer that arrived during the wait is still projected.
 *
 * What can still outlive the wait, and why it is harmless: only a database statement on a connection that
 * went silent (no answer, no reset) — a killed connection or a refused one fails at once, a lock wait ends at
 * `innodb_lock_wait_timeout`, the provider call, the SQS calls and the credential lookup's KMS and Secrets
 * Manager calls are bounded. Then the guard gives up, logs it, and makes the message visible only after the
 * lease has surely expired (`leaseSeconds`), so the redelivery takes the expired lease over instead of being
 * acknowledged as a duplicate. Whatever the frozen
 * run does if it ever resumes is fenced by its lease (holder + lease version, ../jobs/lifecycle-repository.ts):
 * it can no longer change a job someone else has locked.
 *
 * FIFO: the message of a job blocks only its own message group (job id by default), and the reaper
 * re-enqueues in a group of its own, so recovery never waits behind a hidden message.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { EngineError } from '../errors.ts';
import type { MessageControl } from './engine-deps.ts';
import type { RunOutcome } from './outcome.ts';

/** Added to the job's own timeout to bound a whole delivery (lease, projection, settling). */
export const DEFAULT_DELIVERY_MARGIN_MS = 60_000;

/** The consumer gave up on the delivery: its attempt must stop, and is settled as the platform's failure. */
export abstract class DeliveryAbandonedError extends EngineError {
  override readonly retryable = true;
}

/** The delivery outlived its bound. */
export class DeliveryTimeoutError extends DeliveryAbandonedError {
  readonly code = 'DELIVERY_TIMEOUT';
  constructor(readonly jobId: string, readonly timeoutMs: number) {
    super(`delivery of job ${jobId} exceeded ${timeoutMs} ms and was abandoned`);
  }
}

/** The consumer is stopping (the local runtime's shutdown); running deliveries give their jobs back. */
export class ConsumerStoppingError extends DeliveryAbandonedError {
  readonly code = 'CONSUMER_STOPPING';
  constructor(readonly jobId: string) {
    super(`delivery of job ${jobId} was abandoned: the consumer is stopping`);
  }
}

/** An abandoned run did not stop within the stop budget; the handler returns without it. */
export class AbandonedRunStillRunningError extends EngineError {
  readonly code = 'ABANDONED_RUN_STILL_RUNNING';
  override readonly retryable = true;
  constructor(readonly jobId: string, readonly waitedMs: number, options: { cause: DeliveryAbandonedError }) {
    super(`the abandoned run of job ${jobId} had not stopped after ${waitedMs} ms`, options);
  }
}

/** Seconds before a message whose delivery failed on infrastructure is visible again: 5, 10, 20 … 120. */
export function infrastructureRedeliverySeconds(receiveCount: number): number {
  return Math.min(5 * 2 ** Math.max(0, receiveCount - 1), 120);
}

export interface DeliveryGuard {
  jobId: string;
  /** The delivery's bound, from its start. */
  timeoutMs: number;
  receiveCount: number;
  logger: Pick<Logger, 'error' | 'warn'>;
  setVisibility(seconds: number): Promise<void>;
  /** How long, once the delivery is abandoned, to wait for its run to stop (read at that moment). */
  stopBudgetMs(): number;
  /** Seconds after which a lease the run took has surely expired (the engine's lease duration). */
  leaseSeconds: number;
  /** Aborted when the consumer stops: the delivery is abandoned at once. */
  stopping?: AbortSignal;
}

type Settled = { outcome: RunOutcome } | { error: unknown };

/** Runs `run` under the guard; rethrows what escaped (the record is reported failed) after the visibility change. */
export async function guardDelivery(g: DeliveryGuard, run: (control: MessageControl) => Promise<RunOutcome>): Promise<RunOutcome> {
  const abandoned = new AbortController();
  const control: MessageControl = {
    extendVisibility: (seconds) => (abandoned.signal.aborted ? Promise.resolve() : g.setVisibility(seconds)),
    abandoned: abandoned.signal,
  };
  const running: Promise<Settled> = run(control).then((outcome) => ({ outcome }), (error: unknown) => ({ error }));
  try {
    const first = await untilAbandoned(g, running);
    const settled = 'abandon' in first ? await abandon(g, abandoned, first.abandon, running) : first;
    if ('error' in settled) throw settled.error;
    return settled.outcome;
  } catch (err) {
    const seconds = err instanceof AbandonedRunStillRunningError
      ? Math.max(g.leaseSeconds + 1, infrastructureRedeliverySeconds(g.receiveCount))
      : infrastructureRedeliverySeconds(g.receiveCount);
    g.logger.error('delivery failed on infrastructure; the message is visible again after a short backoff', {
      jobId: g.jobId, error: err instanceof Error ? err.name : typeof err, code: (err as { code?: unknown } | null)?.code,
      receiveCount: g.receiveCount, redeliveryInSeconds: seconds,
    });
    await g.setVisibility(seconds).catch((e: unknown) => g.logger.error('could not change message visibility', { jobId: g.jobId, error: (e as Error).name }));
    throw err;
  }
}

/** The run's result, or the reason to abandon it (its bound passed, or the consumer is stopping) if that comes first. */
async function untilAbandoned(g: DeliveryGuard, running: Promise<Settled>): Promise<Settled | { abandon: DeliveryAbandonedError }> {
  let timer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  const reason = new Promise<{ abandon: DeliveryAbandonedError }>((resolve) => {
    timer = setTimeout(() => resolve({ abandon: new DeliveryTimeoutError(g.jobId, g.timeoutMs) }), g.timeoutMs);
    onStop = () => resolve({ abandon: new ConsumerStoppingError(g.jobId) });
    if (g.stopping?.aborted) onStop();
    else g.stopping?.addEventListener('abort', onStop, { once: true });
  });
  try {
    return await Promise.race([running, reason]);
  } finally {
    clearTimeout(timer);
    if (onStop) g.stopping?.removeEventListener('abort', onStop);
  }
}

/**
 * Aborts the attempt and waits for the run to stop, at most the stop budget. Its result when it stopped;
 * otherwise {@link AbandonedRunStillRunningError} (the message then waits out the lease).
 */
async function abandon(g: DeliveryGuard, abandoned: AbortController, reason: DeliveryAbandonedError, running: Promise<Settled>): Promise<Settled> {
  const budgetMs = Math.max(0, g.stopBudgetMs());
  g.logger.warn('delivery abandoned: its attempt is aborted; waiting for the run to stop', { jobId: g.jobId, code: reason.code, stopBudgetMs: budgetMs });
  abandoned.abort(reason);
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), budgetMs)));
  const stopped = await Promise.race([running, gaveUp]).finally(() => clearTimeout(timer));
  if (stopped) return stopped;
  g.logger.error('the abandoned run did not stop in time; its lease expires and the redelivery takes it over', { jobId: g.jobId, waitedMs: budgetMs });
  return { error: new AbandonedRunStillRunningError(g.jobId, budgetMs, { cause: reason }) };
}
