/**
 * The outbox event types and the payload each one stores (ADR-003 §4.1). The dispatcher routes a row by
 * `eventType` through a map (./routes.ts); a type with no route is refused, never guessed at.
 *
 * | eventType          | written by                        | goes to                 |
 * | ------------------ | --------------------------------- | ----------------------- |
 * | `ai.job.enqueue`   | job creation, same transaction    | the job's SQS FIFO queue |
 * | `ai.job.succeeded` | the engine's terminal transition  | EventBridge bus          |
 * | `ai.job.failed`    | terminal transition / dispatcher  | EventBridge bus          |
 * | `ai.job.cancelled` | terminal transition               | EventBridge bus          |
 */
import * as z from 'zod';
import { ULID_PATTERN } from '../db/ids.ts';
import { ENQUEUE_EVENT_TYPE, JOB_AGGREGATE } from './outbox-writer.ts';

/** `aggregateType` of every row about a job; `aggregateId` is then the job id. */
export const JOB_AGGREGATE_TYPE = JOB_AGGREGATE;

/** Asks the dispatcher to put the job's message on its queue (rows built by `buildEnqueueEvent`). */
export const JOB_ENQUEUE_EVENT = ENQUEUE_EVENT_TYPE;

/** A job reached a terminal state; one event type per terminal state. */
export const JOB_TERMINAL_EVENTS = {
  succeeded: 'ai.job.succeeded',
  failed: 'ai.job.failed',
  cancelled: 'ai.job.cancelled',
} as const;

/** A state that ends a job, each announced by its own event type. */
export type TerminalJobState = keyof typeof JOB_TERMINAL_EVENTS;
/** `ai.job.succeeded` | `ai.job.failed` | `ai.job.cancelled`. */
export type JobTerminalEventType = (typeof JOB_TERMINAL_EVENTS)[TerminalJobState];

/** Payload of an `ai.job.enqueue` row: exactly the job id (ADR-003 §8.5: no user, credential or input). */
export const enqueuePayloadSchema = z.strictObject({ jobId: z.string().regex(ULID_PATTERN) });
