/**
 * What the gateway throws when no route of a tier could take the call: every route was refused by the shared
 * limits, a spending cap, or answered 429. Not the job's failure: the engine parks the job without spending an
 * attempt (lib/engine/capacity-park.ts) or, for a spending cap it cannot wait for, ends it.
 */
import { JobFailure } from '../jobs/failures.ts';
import type { ModelRoute } from '../ai/types.ts';
import type { SpendScope } from '../spend/caps.ts';
import type { CapacityRefusal } from './reserve.ts';

/** What a waiting job waits for (the `waitingFor` its owner and admins see). */
export type WaitingFor = 'provider_capacity' | 'spend_cap';

/** The job must wait (or end); `retryInMs` from the database's now. */
export abstract class CapacityWaitError extends JobFailure {
  abstract readonly waitingFor: WaitingFor;
  override readonly retryable = true;
  constructor(message: string, readonly retryInMs: number, readonly route: ModelRoute, readonly tokens: number) {
    super(message);
  }
}

/** Every route is in a cooldown, out of its minute window or calls in flight, or kept for better-ranked jobs. */
export class ProviderCapacityWaitError extends CapacityWaitError {
  readonly code = 'PROVIDER_CAPACITY';
  readonly waitingFor = 'provider_capacity';
  readonly publicMessage = 'Waiting for AI provider capacity; the job will start when there is some';
}

/** Every route would exceed a spending cap; `scope` is the one that lifts first, at its period's end (UTC). */
export class SpendCapWaitError extends CapacityWaitError {
  readonly code = 'SPEND_LIMIT_REACHED';
  readonly waitingFor = 'spend_cap';
  readonly publicMessage = 'A spending limit was reached; the job cannot run before the limit resets';
  constructor(message: string, retryInMs: number, route: ModelRoute, tokens: number, readonly scope: SpendScope) {
    super(message, retryInMs, route, tokens);
  }
}

/**
 * The error for a tier whose routes were all refused: provider capacity when any refusal was for capacity (it
 * lifts first), else the spending cap that lifts first. `refusals` is never empty.
 */
export function waitErrorOf(refusals: readonly (CapacityRefusal & { tokens: number })[]): CapacityWaitError {
  const capacity = refusals.filter((r) => r.reason !== 'spend_cap');
  const pool = capacity.length ? capacity : refusals;
  const first = pool.reduce((a, b) => (b.retryInMs < a.retryInMs ? b : a));
  const what = refusals.map((r) => `${r.route.provider}/${r.route.model}: ${r.reason}${r.scope ? ` (${r.scope})` : ''}`).join('; ');
  if (capacity.length) return new ProviderCapacityWaitError(`no route can take the call now: ${what}`, first.retryInMs, first.route, first.tokens);
  return new SpendCapWaitError(`every route would exceed a spending cap: ${what}`, first.retryInMs, first.route, first.tokens, first.scope!);
}

/**
 * Visibility waits one job message may take (each is one SQS receive): the queues' receive budget counts them
 * (lib/queue/receive-budget.ts), and past them the job is handed to a new message (lib/engine/capacity-park.ts),
 * so waiting never brings a message to its dead-letter queue.
 */
export const CAPACITY_WAIT_RECEIVES = 4;
