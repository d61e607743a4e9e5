/** Typed failures of lifecycle transitions. The API maps them to public codes; the engine branches on them. */
import { EngineError } from '../errors.ts';
import type { JobState, TransitionName } from './states.ts';

export class JobNotFoundError extends EngineError {
  readonly code = 'JOB_NOT_FOUND';
  constructor(readonly jobId: string) {
    super('Job not found');
  }
}

/**
 * A compare-and-set found the job in another state (or fenced by another lease) than the caller expected:
 * someone else moved it first. Nothing was written.
 */
export class StaleTransitionError extends EngineError {
  readonly code = 'STALE_TRANSITION';
  constructor(
    readonly jobId: string,
    readonly via: TransitionName,
    readonly actual: JobState,
  ) {
    super(`Job ${jobId} cannot ${via} from state ${actual}`);
  }
}

/** A live lease is held by another worker; the job is not ours to run now. */
export class LeaseHeldError extends EngineError {
  readonly code = 'JOB_LOCK_CONFLICT';
  constructor(readonly jobId: string) {
    super(`Job ${jobId} is leased by another worker`);
  }
}

/** The caller's lease (holder + version) is no longer the job's current lease: it must stop writing. */
export class LeaseLostError extends EngineError {
  readonly code = 'LEASE_LOST';
  constructor(
    readonly jobId: string,
    readonly leaseVersion: number,
  ) {
    super(`Lease ${leaseVersion} on job ${jobId} was lost`);
  }
}

/** Cancel of a finished job, or of a running job whose type declares `execution.cancellable: false`. */
export class JobNotCancellableError extends EngineError {
  readonly code = 'JOB_NOT_CANCELLABLE';
  constructor(
    readonly jobId: string,
    readonly state: JobState,
    message = 'Job has already finished and cannot be cancelled',
  ) {
    super(message);
  }
}

/**
 * markSucceeded refused because a cancel was requested (ADR-003 §5.4: a cancel accepted before the
 * projection commits always wins). The lease is still the caller's: it must settle the job `cancelled`.
 */
export class CancelRequestedError extends EngineError {
  readonly code = 'CANCEL_REQUESTED';
  constructor(readonly jobId: string) {
    super(`Job ${jobId} has a cancel request; it must not succeed`);
  }
}

export class JobAlreadyCancelledError extends EngineError {
  readonly code = 'JOB_ALREADY_CANCELLED';
  constructor(readonly jobId: string) {
    super('Job is already cancelled');
  }
}
