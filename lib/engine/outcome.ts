/** How one delivery of a job message ended, as the consumer needs it (ack, or fail the record for redelivery). */
export type RunOutcome =
  | { kind: 'succeeded'; jobId: string }
  | { kind: 'failed'; jobId: string; code: string }
  | { kind: 'cancelled'; jobId: string }
  /** Nothing to do for this delivery: ack it. */
  | { kind: 'acknowledged'; jobId: string; reason: 'not_found' | 'terminal' | 'lease_held' | 'lease_lost' | 'already_projected' | 'output_conflict' | 'handed_off' }
  /** A retryable failure: make the message visible again after `delayMs`, and report the record failed. */
  | { kind: 'retry'; jobId: string; code: string; delayMs: number }
  /** Parked for provider capacity or a spending cap, no attempt spent: visible again after `delayMs`, record failed. */
  | { kind: 'wait'; jobId: string; code: string; delayMs: number };

/** Outcomes that leave the message to be redelivered. */
export function needsRedelivery(outcome: RunOutcome): outcome is Extract<RunOutcome, { kind: 'retry' | 'wait' }> {
  return outcome.kind === 'retry' || outcome.kind === 'wait';
}
