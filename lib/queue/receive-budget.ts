/**
 * How many receives a job message may legitimately need before SQS must give up on it (`maxReceiveCount`).
 * Every engine retry is a redelivery of the same message (lib/engine/consumer.ts sets the backoff as the
 * message's visibility and reports the record failed), so a queue's `maxReceiveCount` must cover every
 * attempt a definition on it allows, and the receives that run no attempt at all:
 *
 *   required = attempts × {@link RECEIVES_PER_ATTEMPT} + {@link MAX_INFRASTRUCTURE_REFUNDS} + {@link WHOLE_BATCH_FAILURES}
 *              + {@link CAPACITY_WAIT_RECEIVES}
 *
 * - per attempt, the receive that runs it, plus one receive that may be spent without running it: an
 *   infrastructure error before the lease (database unreachable: the record fails and comes back after the
 *   visibility timeout), or a record skipped because an earlier record of its FIFO group failed in the batch;
 * - the deliveries given back to the job after an infrastructure failure during its attempt (a database
 *   blip is the platform's failure: the attempt is refunded and the same message redelivered), at most
 *   {@link MAX_INFRASTRUCTURE_REFUNDS} per job;
 * - the receives a job may spend waiting for provider capacity or a spending cap through its message's
 *   visibility, at most {@link CAPACITY_WAIT_RECEIVES} per message: past them the job is handed to a new message
 *   (lib/engine/capacity-park.ts), so waiting, however long, never dead-letters;
 * - over the message's life, whole-batch failures that consume a receive of every record: Lambda throttling
 *   of the event source's invocation, a cold start whose secret fetch fails, a function replaced mid-batch by
 *   a deploy. AWS advises a `maxReceiveCount` of at least 5 for Lambda consumers for exactly these.
 *
 * Spacing: a record given back on infrastructure (database unreachable, or its secret unreadable on a cold
 * start: lib/engine/consumer-handler.ts) comes back after 5, 10, 20, 40, 80, then 120 s, not after the
 * visibility timeout. So an outage of the database or of Secrets Manager that outlasts the budget's receives
 * (about 27 minutes at 18) dead-letters the messages it holds: their jobs fail DEAD_LETTERED, and an admin
 * retry runs them again. The price of picking work up within seconds after a short blip.
 *
 * A message that dies before all this is moved to the DLQ and the job fails DEAD_LETTERED although it had
 * attempts left. Re-enqueues by the reaper send a new message (new deduplication id) with its own count, so
 * they need no budget here. Figures and the derivation: docs/deploy.md "Queues".
 */
import { maxAttemptsOf, type JobDefinitionMetadata, type QueueName } from '../jobs/definition.ts';
import { MAX_INFRASTRUCTURE_REFUNDS } from '../jobs/failures.ts';
import { CAPACITY_WAIT_RECEIVES } from '../capacity/capacity-wait.ts';
import { InvalidQueueDefinitionError } from './queue-definitions.ts';

/** The receive that runs an attempt, plus one that may be spent on it without running it. */
export const RECEIVES_PER_ATTEMPT = 2;
/** Receives of every record lost to whole-batch failures (throttling, cold-start secret fetch, deploys). */
export const WHOLE_BATCH_FAILURES = 5;

type Budgeted = Pick<JobDefinitionMetadata, 'jobType' | 'execution'> & { queue: Pick<JobDefinitionMetadata['queue'], 'queueName'> };

/** Receives one job of this definition may need (see the module comment). */
export function requiredReceives(def: Pick<JobDefinitionMetadata, 'execution'>): number {
  return maxAttemptsOf(def) * RECEIVES_PER_ATTEMPT + MAX_INFRASTRUCTURE_REFUNDS + WHOLE_BATCH_FAILURES + CAPACITY_WAIT_RECEIVES;
}

/**
 * The smallest `maxReceiveCount` that serves every definition: the stack's default when the `maxReceiveCount`
 * context key is unset. With no definitions, only the whole-batch allowance.
 */
export function requiredMaxReceiveCount(defs: readonly Budgeted[]): number {
  return Math.max(WHOLE_BATCH_FAILURES, ...defs.map(requiredReceives));
}

/**
 * Refuses queues that would dead-letter a job with attempts left: every definition's
 * {@link requiredReceives} must fit its queue's `maxReceiveCount`. The stack calls this at synth.
 * @throws InvalidQueueDefinitionError naming each definition that needs more, and what it needs
 */
export function assertReceiveBudget(defs: readonly Budgeted[], maxReceiveCount: Readonly<Record<QueueName, number>>): void {
  const short = defs
    .filter((def) => requiredReceives(def) > maxReceiveCount[def.queue.queueName])
    .map((def) => `${def.jobType} needs ${requiredReceives(def)} receives (${maxAttemptsOf(def)} attempts × ${RECEIVES_PER_ATTEMPT} + ${MAX_INFRASTRUCTURE_REFUNDS} + ${WHOLE_BATCH_FAILURES} + ${CAPACITY_WAIT_RECEIVES}) `
      + `but queue ${def.queue.queueName} allows ${maxReceiveCount[def.queue.queueName]}`);
  if (short.length) throw new InvalidQueueDefinitionError(`maxReceiveCount too small: ${short.join('; ')}`);
}
