/**
 * The execution pipeline for one delivery of a job message (ADR-003 §5.1):
 * PREPARE (lock) → RESOLVE + EXECUTE (under the definition's timeout, with heartbeat and cancel polling)
 * → PROJECT (one transaction) → COMPLETE (one log line: ids, outcome, latency, tokens — never input,
 * output, snapshot or key). Failures are settled by ./settle.ts.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { JobMessage } from '../queue/job-message.ts';
import { CancelRequestedError, LeaseLostError, StaleTransitionError } from '../jobs/lifecycle-errors.ts';
import { InfrastructureError, JobCancelledError, JobTimeoutError, asJobFailure } from '../jobs/failures.ts';
import { DeliveryAbandonedError } from './delivery-guard.ts';
import type { EngineDeps, MessageControl } from './engine-deps.ts';
import type { RunOutcome } from './outcome.ts';
import { prepare, type Prepared } from './prepare.ts';
import { keepLease } from './lease-keeper.ts';
import { runAttempt, writeUsageBeforeFailing, type AttemptResult } from './attempt.ts';
import { OutputConflictError, projectResult } from './project.ts';
import { settleFailure } from './settle.ts';
import { NO_ATTEMPT_STREAM, type AttemptStream, type FinalAppend } from '../stream/attempt-stream.ts';

/** Runs one delivery. Never throws for job-level failures; only an infrastructure error escapes (→ redelivery). */
export async function runJob(message: JobMessage, deps: EngineDeps, control: MessageControl = {}): Promise<RunOutcome> {
  const started = Date.now();
  const prepared = await prepare(message, deps);
  if (prepared.kind !== 'ready') return complete(prepared, deps, started);
  let tokens = 0;
  const outcome = await execute(prepared, deps, control, (n) => (tokens += n)).catch((err: unknown) => {
    if (err instanceof LeaseLostError || err instanceof StaleTransitionError) {
      return { kind: 'acknowledged', jobId: message.jobId, reason: 'lease_lost' } as const;
    }
    throw err;
  });
  return complete(outcome, deps, started, { jobType: prepared.job.jobType, attempt: prepared.job.attemptCount, tokens });
}

async function execute(p: Prepared, deps: EngineDeps, control: MessageControl, addTokens: (n: number) => void): Promise<RunOutcome> {
  const { job, def, fence } = p;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new JobTimeoutError(job.timeoutMs, def.execution.abortStrategy === 'retry')),
    job.timeoutMs,
  );
  // Abandoned by the consumer (./delivery-guard.ts): the attempt stops, also when that happened before it began.
  const abandon = () => controller.abort(control.abandoned?.reason);
  control.abandoned?.addEventListener('abort', abandon, { once: true });
  if (control.abandoned?.aborted) abandon();
  const stopLease = keepLease({
    db: deps.db, jobId: job.id, fence, controller, timing: deps.timing, extendVisibility: control.extendVisibility,
    onError: (err) => deps.logger.warn('lease keeper error', { jobId: job.id, error: errorName(err) }),
  });
  // Opened once per attempt, under the lease just taken; closed (all previews durable) before the attempt settles.
  const stream = openStream(p, deps);
  let attempt: { result: AttemptResult } | { error: unknown } = { error: undefined };
  // An attempt that answered hands its stream's last batch to the projection; any other closes it.
  let final: FinalAppend | undefined;
  try {
    attempt = { result: await runAttempt(job, def, controller.signal, deps, { snapshot: p.snapshot, stream }) };
  } catch (err) {
    attempt = { error: err };
  } finally {
    clearTimeout(timer);
    if ('result' in attempt && !controller.signal.aborted && stream.handOver) final = await stream.handOver();
    else await stream.close();
    await stopLease();
    control.abandoned?.removeEventListener('abort', abandon);
  }
  if ('error' in attempt) {
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : attempt.error;
    if (reason instanceof LeaseLostError) throw reason;
    // Abandoned by the consumer (a hung call, a stopping consumer): the platform's failure, settled as infrastructure.
    const failure = reason instanceof DeliveryAbandonedError ? new InfrastructureError(reason.message, { cause: reason }) : asJobFailure(reason);
    return settleFailure(job, def, fence, failure, job.errorCode, deps);
  }
  const { result } = attempt;
  addTokens(result.generated.usage.totalTokens);
  if (controller.signal.reason instanceof JobCancelledError) {
    await writeUsageBeforeFailing(result.usage, job, deps);
    return settleFailure(job, def, fence, controller.signal.reason, job.errorCode, deps);
  }
  return project(p, result, deps, final);
}

/** The attempt's stream segment: the engine's log when it has one and the type streams, else nothing. */
function openStream({ job, def, fence }: Prepared, deps: EngineDeps): AttemptStream {
  return def.streaming && deps.openAttemptStream ? deps.openAttemptStream(job, fence) : NO_ATTEMPT_STREAM;
}

/** PROJECT, and what its refusals mean: a cancel that won settles `cancelled` (the call stays billed). */
async function project(p: Prepared, result: AttemptResult, deps: EngineDeps, final?: FinalAppend): Promise<RunOutcome> {
  const { job, def, fence } = p;
  try {
    const projection = await projectResult(job, def, fence, result, deps, final);
    if (projection.kind === 'already_projected') return { kind: 'acknowledged', jobId: job.id, reason: 'already_projected' };
    return { kind: 'succeeded', jobId: job.id };
  } catch (err) {
    // A projection that failed did not commit the ledger row it carried: written on its own (idempotent, a
    // no-op when it did commit) so the call is billed whatever happened.
    await writeUsageBeforeFailing(result.usage, job, deps);
    if (err instanceof CancelRequestedError || (err instanceof LeaseLostError && (await cancelWon(p, deps)))) {
      return settleFailure(job, def, fence, new JobCancelledError('cancel requested before the projection committed'), job.errorCode, deps);
    }
    if (err instanceof OutputConflictError) return { kind: 'acknowledged', jobId: job.id, reason: 'output_conflict' };
    if (err instanceof LeaseLostError || err instanceof StaleTransitionError) throw err;
    return settleFailure(job, def, fence, asJobFailure(err), job.errorCode, deps);
  }
}

/**
 * Whether the succeeded compare-and-set was refused for a cancel request while the lease is still ours.
 * Read outside the projection transaction: inside it a REPEATABLE READ snapshot may predate the cancel.
 */
async function cancelWon({ job, fence }: Prepared, deps: EngineDeps): Promise<boolean> {
  const now = await deps.db.aiJob.findUnique({ where: { id: job.id }, select: { lifecycleStatus: true, lockedBy: true, leaseVersion: true, cancelRequestedAt: true } });
  return now?.lifecycleStatus === 'running' && now.lockedBy === fence.holder && now.leaseVersion === fence.leaseVersion && now.cancelRequestedAt !== null;
}

/** Metric per outcome kind (a table, so a new kind cannot go uncounted). */
const OUTCOME_METRICS: Record<RunOutcome['kind'], string> = {
  succeeded: 'JobsSucceeded', failed: 'JobsFailed', cancelled: 'JobsCancelled', retry: 'AttemptsRetried', acknowledged: 'DeliveriesAcknowledged',
  wait: 'CapacityWaits',
};

function complete(
  outcome: RunOutcome, deps: EngineDeps, started: number, extra: { jobType?: string; attempt?: number; tokens?: number } = {},
): RunOutcome {
  deps.metrics.addMetric(OUTCOME_METRICS[outcome.kind], MetricUnit.Count, 1);
  deps.metrics.addMetric('DeliveryLatency', MetricUnit.Milliseconds, Date.now() - started);
  if (extra.tokens) deps.metrics.addMetric('TokensUsed', MetricUnit.Count, extra.tokens);
  deps.logger.info('job delivery finished', {
    jobId: outcome.jobId, outcome: outcome.kind, ...('code' in outcome ? { errorCode: outcome.code } : {}),
    ...('reason' in outcome ? { reason: outcome.reason } : {}), ...extra, latencyMs: Date.now() - started,
  });
  return outcome;
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}
