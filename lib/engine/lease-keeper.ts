/**
 * Keeps a running attempt's lease alive and listens for cancellation (ADR-003 §1.7, §5.4):
 * - every `heartbeatMs` (10 s): extendLock (holder + version) and extend the SQS message's visibility, so
 *   neither the reaper nor SQS hands the job to someone else while it is still running;
 * - every `cancelPollMs` (1 s): read `cancelRequestedAt`, so a cancel aborts the provider call within ~2 s.
 * It aborts the attempt's controller with the reason (JobCancelledError or LeaseLostError); it never throws.
 * Once the controller is aborted it starts nothing new; its stop waits for a tick in flight, so a run that
 * has returned has no heartbeat of its own left running (../engine/delivery-guard.ts relies on it).
 */
import type { Db } from '../db/client.ts';
import { extendLock, type LeaseFence } from '../jobs/lifecycle-repository.ts';
import { LeaseLostError } from '../jobs/lifecycle-errors.ts';
import { JobCancelledError } from '../jobs/failures.ts';

export interface LeaseTiming {
  leaseMs: number;
  heartbeatMs: number;
  cancelPollMs: number;
}

export const DEFAULT_LEASE_TIMING: LeaseTiming = { leaseMs: 60_000, heartbeatMs: 10_000, cancelPollMs: 1_000 };

export interface LeaseKeeperOptions {
  db: Db;
  jobId: string;
  fence: LeaseFence;
  controller: AbortController;
  timing: LeaseTiming;
  /** Pushes the SQS message's visibility out (seconds from now); failures are only logged by the caller. */
  extendVisibility?: (seconds: number) => Promise<void>;
  onError?: (err: unknown) => void;
}

/**
 * Starts the timers; call the returned function to stop them (always, in a finally, and await it): it resolves
 * once no tick is in flight.
 */
export function keepLease(o: LeaseKeeperOptions): () => Promise<void> {
  let lastHeartbeat = Date.now();
  let inFlight: Promise<void> | undefined;
  const tick = async () => {
    try {
      if (Date.now() - lastHeartbeat >= o.timing.heartbeatMs) {
        lastHeartbeat = Date.now();
        const { cancelRequested } = await extendLock(o.db, o.jobId, o.fence, { leaseMs: o.timing.leaseMs });
        await o.extendVisibility?.(Math.ceil((o.timing.leaseMs * 2) / 1000)).catch((err: unknown) => o.onError?.(err));
        if (cancelRequested) o.controller.abort(new JobCancelledError('cancel requested while running'));
      } else if (await cancelRequested(o.db, o.jobId)) {
        o.controller.abort(new JobCancelledError('cancel requested while running'));
      }
    } catch (err) {
      if (err instanceof LeaseLostError) o.controller.abort(err);
      else o.onError?.(err);
    }
  };
  const timer = setInterval(() => {
    if (inFlight || o.controller.signal.aborted) return;
    inFlight = tick().finally(() => (inFlight = undefined));
  }, Math.min(o.timing.cancelPollMs, o.timing.heartbeatMs));
  return async () => {
    clearInterval(timer);
    await inFlight;
  };
}

async function cancelRequested(db: Db, jobId: string): Promise<boolean> {
  const row = await db.aiJob.findUnique({ where: { id: jobId }, select: { cancelRequestedAt: true } });
  return row?.cancelRequestedAt != null;
}
