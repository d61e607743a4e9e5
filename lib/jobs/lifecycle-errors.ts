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

export class JobNotCancellableError extends EngineError {
  readonly code = 'JOB_NOT_CANCELLABLE';
  constructor(
    readonly jobId: string,
    readonly state: JobState,
  ) {
    super('Job has already finished and cannot be cancelled');
  }
}

export class JobAlreadyCancelledError extends EngineError {
  readonly code = 'JOB_ALREADY_CANCELLED';
  constructor(readonly jobId: string) {
    super('Job is already cancelled');
  }
}
