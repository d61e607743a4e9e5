/**
 * The job state machine as data (ADR-003 §1, plus one documented exception).
 *
 *   queued ──lockJob──▶ running ──markSucceeded──▶ succeeded
 *     │  │                │  ▲ ──markFailed─────▶ failed
 *     │  │                │  └ lockJob / releaseLock (next attempt: lease re-taken or given back)
 *     │  │                └────markCancelled────▶ cancelled
 *     │  └──markCancelled──────────────────────▶ cancelled
 *     └────failBeforeAttempt───────────────────▶ failed   (exception: no attempt ever started)
 *
 * Terminal states never change. `running → queued` is illegal: a retry keeps the job `running` with its
 * lease released, and the next delivery re-locks it with a new lease version.
 * Only lib/jobs/lifecycle-repository.ts moves a job along these edges; see docs/state-machine.md.
 */
import type { AiJobStatus } from '../db/generated/enums.ts';

export type JobState = AiJobStatus;

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const satisfies readonly JobState[];
export const TERMINAL_STATES: ReadonlySet<JobState> = new Set(['succeeded', 'failed', 'cancelled']);
export const ACTIVE_STATES: readonly JobState[] = ['queued', 'running'];

/** The repository function that performs a transition. */
export type TransitionName =
  | 'lockJob'
  | 'releaseLock'
  | 'markSucceeded'
  | 'markFailed'
  | 'markCancelled'
  | 'failBeforeAttempt';

export interface Transition {
  from: JobState;
  to: JobState;
  via: TransitionName;
  /** Why this edge exists; shown in docs and the admin history. */
  why: string;
}

/** Every allowed transition. Anything not listed is forbidden. */
export const TRANSITIONS: readonly Transition[] = [
  { from: 'queued', to: 'running', via: 'lockJob', why: 'a consumer takes the lease for attempt 1' },
  { from: 'running', to: 'running', via: 'lockJob', why: 'next attempt re-takes a released or expired lease' },
  { from: 'running', to: 'running', via: 'releaseLock', why: 'an attempt failed retryably; the lease is given back for the next delivery' },
  { from: 'running', to: 'succeeded', via: 'markSucceeded', why: 'output validated and projected in one transaction' },
  { from: 'running', to: 'failed', via: 'markFailed', why: 'a permanent error, or retries exhausted' },
  { from: 'running', to: 'cancelled', via: 'markCancelled', why: 'cancel requested while running; the engine stopped' },
  { from: 'queued', to: 'cancelled', via: 'markCancelled', why: 'cancelled before any attempt' },
  {
    from: 'queued', to: 'failed', via: 'failBeforeAttempt',
    why: 'system failure before any attempt (message could not be dispatched, job type no longer registered)',
  },
];

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.has(state);
}

export function isAllowed(from: JobState, to: JobState, via?: TransitionName): boolean {
  return TRANSITIONS.some((t) => t.from === from && t.to === to && (via === undefined || t.via === via));
}

/** The states a transition function accepts as its starting point. */
export function sourcesOf(via: TransitionName): JobState[] {
  return TRANSITIONS.filter((t) => t.via === via).map((t) => t.from);
}
