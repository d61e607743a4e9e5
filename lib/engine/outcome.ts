/** How one delivery of a job message ended, as the consumer needs it (ack, or fail the record for redelivery). */
export type RunOutcome =
  | { kind: 'succeeded'; jobId: string }
  | { kind: 'failed'; jobId: string; code: string }
  | { kind: 'cancelled'; jobId: string }
  /** Nothing to do for this delivery: ack it. */
  | { kind: 'acknowledged'; jobId: string; reason: 'not_found' | 'terminal' | 'lease_held' | 'lease_lost' | 'already_projected' | 'output_conflict' }
  /** A retryable failure: make the message visible again after `delayMs`, and report the record failed. */
  | { kind: 'retry'; jobId: string; code: string; delayMs: number };

/** Outcomes that leave the message to be redelivered. */
export function needsRedelivery(outcome: RunOutcome): outcome is Extract<RunOutcome, { kind: 'retry' }> {
  return outcome.kind === 'retry';
}
