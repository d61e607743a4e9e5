/**
 * Domain events about finished jobs: `ai.job.succeeded`, `ai.job.failed`, `ai.job.cancelled`, published on
 * EventBridge through the outbox (see docs/events.md). The row is written in the transaction that made the
 * terminal transition, so an event exists exactly when the transition committed.
 *
 * The detail carries ids, type, status, error code and timestamps. Never input, output, messages or
 * credentials: {@link jobEventDetailSchema} is strict, and the dispatcher re-validates before sending.
 */
import * as z from 'zod';
import type { AiJob, Db, OutboxEvent, Prisma } from '../db/client.ts';
import { newId, ULID_PATTERN } from '../db/ids.ts';
import { EngineError } from '../errors.ts';
import { JOB_AGGREGATE_TYPE, JOB_TERMINAL_EVENTS, type TerminalJobState } from './event-types.ts';
import { outboxInsert, type NewOutboxEvent } from './outbox-writer.ts';

/** EventBridge `source` of every job event. `detail-type` is the event type, e.g. `ai.job.succeeded`. */
export const JOB_EVENT_SOURCE = 'ai.jobs';

const ulid = z.string().regex(ULID_PATTERN);
const timestamp = z.iso.datetime();

/** The `detail` of a job event (version 1). Strict: nothing beyond these fields may be published. */
export const jobEventDetailSchema = z.strictObject({
  version: z.literal(1),
  /** The outbox row id: unique per event, for consumers to drop redeliveries (EventBridge is at-least-once). */
  eventId: ulid,
  jobId: ulid,
  jobType: z.string().min(1).max(64),
  userId: z.string().min(1).max(64),
  /** The job this one retries, if any. */
  parentJobId: ulid.nullable(),
  status: z.enum(['succeeded', 'failed', 'cancelled']),
  /** Stable public code (`DISPATCH_FAILED`, `PROVIDER_TIMEOUT`, `CANCELLED`, …); null on success. */
  errorCode: z.string().max(64).nullable(),
  attemptCount: z.number().int().min(0),
  createdAt: timestamp,
  startedAt: timestamp.nullable(),
  finishedAt: timestamp,
  /** When the event was recorded (the terminal transition's transaction). */
  occurredAt: timestamp,
});

/** A parsed job event detail. */
export type JobEventDetail = z.output<typeof jobEventDetailSchema>;

/** A job event was requested for a job that is not in a terminal state. */
export class JobNotTerminalError extends EngineError {
  readonly code = 'JOB_NOT_TERMINAL';
  constructor(readonly jobId: string, readonly state: string) {
    super(`Job ${jobId} is ${state}, not terminal; no job event is written`);
  }
}

type JobFields = Pick<
  AiJob,
  'id' | 'jobType' | 'userId' | 'parentJobId' | 'lifecycleStatus' | 'errorCode' | 'attemptCount' | 'createdAt' | 'startedAt' | 'finishedAt'
>;

/** The event type for a job's current state, or undefined when the state is not terminal. */
export function jobEventTypeFor(state: string): (typeof JOB_TERMINAL_EVENTS)[TerminalJobState] | undefined {
  return Object.hasOwn(JOB_TERMINAL_EVENTS, state) ? JOB_TERMINAL_EVENTS[state as TerminalJobState] : undefined;
}

/** Builds the detail of a terminal job's event; pure, so callers and tests can see exactly what is published. */
export function toJobEventDetail(job: JobFields, eventId: string, occurredAt: Date): JobEventDetail {
  if (!jobEventTypeFor(job.lifecycleStatus)) throw new JobNotTerminalError(job.id, job.lifecycleStatus);
  return jobEventDetailSchema.parse({
    version: 1,
    eventId,
    jobId: job.id,
    jobType: job.jobType,
    userId: job.userId,
    parentJobId: job.parentJobId,
    status: job.lifecycleStatus,
    errorCode: job.errorCode,
    attemptCount: job.attemptCount,
    createdAt: job.createdAt.toISOString(),
    startedAt: job.startedAt?.toISOString() ?? null,
    finishedAt: (job.finishedAt ?? occurredAt).toISOString(),
    occurredAt: occurredAt.toISOString(),
  });
}

/**
 * The outbox row announcing that `job` finished, for callers that write rows themselves (e.g. with
 * `outboxInsert` on the raw-SQL path). One event per job: the dedupe key is `<eventType>:<jobId>`, so a
 * second row for the same job fails on the unique key instead of publishing twice.
 * @throws JobNotTerminalError when the job is not succeeded, failed or cancelled.
 */
export function buildJobTerminalEvent(job: JobFields, now: Date = new Date()): NewOutboxEvent {
  const eventType = jobEventTypeFor(job.lifecycleStatus);
  if (!eventType) throw new JobNotTerminalError(job.id, job.lifecycleStatus);
  const id = newId();
  return {
    id,
    eventType,
    aggregateType: JOB_AGGREGATE_TYPE,
    aggregateId: job.id,
    dedupeKey: `${eventType}:${job.id}`,
    payload: toJobEventDetail(job, id, now),
    queueName: null,
    messageGroupId: null,
    availableAt: now,
  };
}

/**
 * Writes the outbox row announcing that `job` finished ({@link buildJobTerminalEvent}). Call it with the
 * transaction client of the terminal transition, passing the job row that transition returned, so the event
 * exists exactly when the transition commits.
 * @throws JobNotTerminalError when the job is not succeeded, failed or cancelled.
 */
export async function addJobTerminalEvent(db: Db, job: JobFields, opts: { now?: Date } = {}): Promise<OutboxEvent> {
  const event = buildJobTerminalEvent(job, opts.now);
  // One raw INSERT (the same statement the creating transaction uses): no read-back on the hot path.
  const at = event.availableAt ?? new Date();
  const insert = outboxInsert(event, at);
  await db.$executeRawUnsafe(insert.sql, ...insert.values);
  return {
    ...event, queueName: event.queueName ?? null, messageGroupId: event.messageGroupId ?? null, status: 'pending',
    payload: event.payload as Prisma.JsonValue, attemptCount: 0, availableAt: at, lockedBy: null, lockedAt: null,
    publishedAt: null, lastError: null, createdAt: at, updatedAt: at,
  };
}
