/**
 * Bounds one delivery and keeps its message moving when the platform fails (issue: nothing stuck):
 * - an error escaping the engine (the database unreachable while taking the lease, settling or projecting)
 *   is logged and the message made visible again after a short backoff, instead of staying hidden for the
 *   queue's whole visibility timeout (9–30 min);
 * - a delivery that outlives its job's timeout plus a margin (a hung database call, a killed connection
 *   that never answers) is abandoned: its attempt is aborted (which stops the heartbeat, so the lease can
 *   expire), its visibility is no longer extended, and the message is made visible again after the backoff.
 * FIFO: the message of a job blocks only its own message group (job id by default), and the reaper
 * re-enqueues in a group of its own, so recovery never waits behind a hidden message.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { EngineError } from '../errors.ts';
import type { MessageControl } from './engine-deps.ts';
import type { RunOutcome } from './outcome.ts';

/** Added to the job's own timeout to bound a whole delivery (lease, projection, settling). */
export const DEFAULT_DELIVERY_MARGIN_MS = 60_000;

/** The delivery outlived its bound; the run was abandoned and the message made visible again. */
export class DeliveryTimeoutError extends EngineError {
  readonly code = 'DELIVERY_TIMEOUT';
  constructor(readonly jobId: string, readonly timeoutMs: number) {
    super(`delivery of job ${jobId} exceeded ${timeoutMs} ms and was abandoned`);
  }
}

/** Seconds before a message whose delivery failed on infrastructure is visible again: 5, 10, 20 … 120. */
export function infrastructureRedeliverySeconds(receiveCount: number): number {
  return Math.min(5 * 2 ** Math.max(0, receiveCount - 1), 120);
}

export interface DeliveryGuard {
  jobId: string;
  timeoutMs: number;
  receiveCount: number;
  logger: Pick<Logger, 'error'>;
  setVisibility(seconds: number): Promise<void>;
}

/** Runs `run` under the guard; rethrows what escaped (the record is reported failed) after the visibility change. */
export async function guardDelivery(g: DeliveryGuard, run: (control: MessageControl) => Promise<RunOutcome>): Promise<RunOutcome> {
  const abandoned = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new DeliveryTimeoutError(g.jobId, g.timeoutMs);
      abandoned.abort(err);
      reject(err);
    }, g.timeoutMs);
  });
  const control: MessageControl = {
    extendVisibility: (seconds) => (abandoned.signal.aborted ? Promise.resolve() : g.setVisibility(seconds)),
    abandoned: abandoned.signal,
  };
  try {
    return await Promise.race([run(control), timeout]);
  } catch (err) {
    const seconds = infrastructureRedeliverySeconds(g.receiveCount);
    g.logger.error('delivery failed on infrastructure; the message is visible again after a short backoff', {
      jobId: g.jobId, error: err instanceof Error ? err.name : typeof err, code: (err as { code?: unknown } | null)?.code,
      receiveCount: g.receiveCount, redeliveryInSeconds: seconds,
    });
    await g.setVisibility(seconds).catch((e: unknown) => g.logger.error('could not change message visibility', { jobId: g.jobId, error: (e as Error).name }));
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
