/**
 * Writes outbox rows inside the caller's transaction (the transactional-outbox half of "created atomically
 * with the business write"). The dispatcher sends them after commit.
 */
import type { Prisma } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { executeInTransaction, insertStatement, type SqlStatement } from '../db/sql.ts';

export const ENQUEUE_EVENT_TYPE = 'ai.job.enqueue';
export const JOB_AGGREGATE = 'AiJob';

export interface NewOutboxEvent {
  id: string;
  eventType: string;
  aggregateType: string;
  aggregateId: string;
  /** Unique: a second row with the same key is refused by the database (idempotent producers). */
  dedupeKey: string;
  payload: Prisma.InputJsonValue;
  /** Routing for queue events: `interactive` | `background`. */
  queueName?: string | null;
  /** SQS FIFO message group (the job id, or the user id for per-user ordering). */
  messageGroupId?: string | null;
  availableAt?: Date;
}

/**
 * The `ai.job.enqueue` row for a new job (seed #289): dedupeKey `ai.job.enqueue:<jobId>`, payload exactly
 * `{"jobId": …}` — no user id, credential or input ever goes into the outbox.
 */
export function buildEnqueueEvent(job: { jobId: string; queueName: string; messageGroupId: string; attempt?: number | string }): NewOutboxEvent {
  return {
    id: newId(),
    eventType: ENQUEUE_EVENT_TYPE,
    aggregateType: JOB_AGGREGATE,
    aggregateId: job.jobId,
    // A re-enqueue by the reaper carries the attempt it is for, so each attempt is enqueued at most once.
    dedupeKey: `${ENQUEUE_EVENT_TYPE}:${job.jobId}${job.attempt === undefined ? '' : `:attempt-${job.attempt}`}`,
    payload: { jobId: job.jobId },
    queueName: job.queueName,
    messageGroupId: job.messageGroupId,
  };
}

/**
 * The INSERT for one row: `pending`, due now unless `availableAt` says otherwise — or, with `claim`, born
 * claimed by the creator's eager dispatch: `processing` under `claim.holder`, leased until `claim.leaseUntil`
 * (kept in `availableAt`, as every lease is; the dispatcher releases it after that if it was never settled).
 */
export function outboxInsert(e: NewOutboxEvent, now = new Date(), claim?: { holder: string; leaseUntil: Date }): SqlStatement {
  return insertStatement('OutboxEvent', {
    id: e.id, eventType: e.eventType, aggregateType: e.aggregateType, aggregateId: e.aggregateId,
    dedupeKey: e.dedupeKey, payload: JSON.stringify(e.payload), queueName: e.queueName ?? null,
    messageGroupId: e.messageGroupId ?? null, status: claim ? 'processing' : 'pending', attemptCount: 0,
    ...(claim ? { lockedBy: claim.holder, lockedAt: now } : {}),
    availableAt: claim?.leaseUntil ?? e.availableAt ?? now, createdAt: now, updatedAt: now,
  });
}

/** Inserts rows inside the caller's Prisma transaction. */
export async function insertOutboxEvents(tx: Prisma.TransactionClient, events: NewOutboxEvent[]): Promise<void> {
  await executeInTransaction(tx, events.map((e) => outboxInsert(e)));
}
