/**
 * Part of the lifecycle repository (./lifecycle-repository.ts): a running job parked to wait for provider
 * capacity or a spending cap (lib/capacity/). Like a released lease after a retryable failure (running →
 * running, no holder, `lockUntil` = when it is due so the reaper can tell a lost message), but the attempt is
 * given back — waiting is not the job's failure — and the job's error columns are left as the last attempt set
 * them. Its waiting row (CapacityWait) says why and until when, and ranks it among waiting jobs. One script, one
 * round trip on the raw pool: the fenced compare-and-set, its audit row, the waiting row and, when the job's
 * message is handed off (a long wait, or its visibility waits used up), the new message's outbox row due when
 * the wait ends. Whether the compare-and-set matched is read back from the row (no session variable).
 */
import { newId } from '../db/ids.ts';
import type { SqlStatement, SqlValue } from '../db/sql.ts';
import { runAtomically } from '../db/sql-pool.ts';
import { withClock, type DbClock } from '../capacity/db-clock.ts';
import { publishPush } from '../stream/publisher-registry.ts';
import { WAIT_REASON_OF_CODE } from '../stream/status-entries.ts';
import { ENQUEUE_EVENT_TYPE, JOB_AGGREGATE, outboxInsert } from '../outbox/outbox-writer.ts';
import type { LeaseFence } from './lifecycle-repository.ts';
import { LeaseLostError } from './lifecycle-errors.ts';
import { NEXT_STATUS_SEQ } from './stream-seq.ts';

export interface ParkRequest {
  jobId: string;
  fence: LeaseFence;
  actor: string;
  waitingFor: 'provider_capacity' | 'spend_cap';
  /** The audit row's error code (PROVIDER_CAPACITY, SPEND_LIMIT_REACHED). */
  code: string;
  /** The route the job waits for (provider capacity), or null. */
  route: { provider: string; model: string } | null;
  /** The window estimate it will reserve (kept free for it when it is due and ranked first). */
  tokens: number;
  /** How long it waits, from now (the database's now for `dueAt`, this process's for `lockUntil`). */
  waitMs: number;
  /** Visibility waits its current message has used, after this one (0 when handed off). */
  waits: number;
  /** Hand the job to a new message, sent when the wait ends (the current one is then deleted). */
  handoff: { queueName: string } | null;
  clock: DbClock;
  now?: Date;
}

/** The dedupe key of the message that resumes a job parked under lease `leaseVersion`. */
export function waitEnqueueKey(jobId: string, leaseVersion: number): string {
  return `${ENQUEUE_EVENT_TYPE}:${jobId}:wait-${leaseVersion}`;
}

/**
 * Parks the job. @throws LeaseLostError when the lease is no longer this one (nothing written)
 */
export async function parkForCapacity(p: ParkRequest): Promise<void> {
  const now = p.now ?? new Date();
  const due = new Date(now.getTime() + p.waitMs);
  const matched = "id = ? AND lifecycleStatus = 'running' AND lockedBy IS NULL AND leaseVersion = ? AND updatedAt = ? AND lockUntil = ?";
  const matchedValues: SqlValue[] = [p.jobId, p.fence.leaseVersion, now, due];
  const statements: SqlStatement[] = [
    {
      sql: `UPDATE \`AiJob\` SET lockedBy = NULL, lockUntil = ?, attemptCount = GREATEST(attemptCount - 1, 0), updatedAt = ?, ${NEXT_STATUS_SEQ}
            WHERE id = ? AND lifecycleStatus = 'running' AND lockedBy = ? AND leaseVersion = ?`,
      values: [due, now, p.jobId, p.fence.holder, p.fence.leaseVersion],
    },
    {
      sql: `INSERT INTO \`AiJobTransition\` (id, jobId, fromStatus, toStatus, actor, reason, errorCode, leaseVersion, seq, attempt, retryAt, createdAt)
            SELECT ?, id, 'running', 'running', ?, ?, ?, leaseVersion, statusSeq, attemptCount, ?, ? FROM \`AiJob\` WHERE ${matched}`,
      values: [newId(), p.actor.slice(0, 128), `waiting for ${p.waitingFor.replace('_', ' ')} until ${due.toISOString()}; attempt given back`.slice(0, 255), p.code, due, now, ...matchedValues],
    },
    waitRowUpsert(p, matched, matchedValues),
  ];
  if (p.handoff) {
    const insert = outboxInsert({
      id: newId(), eventType: ENQUEUE_EVENT_TYPE, aggregateType: JOB_AGGREGATE, aggregateId: p.jobId,
      dedupeKey: waitEnqueueKey(p.jobId, p.fence.leaseVersion), payload: { jobId: p.jobId }, queueName: p.handoff.queueName,
      messageGroupId: `${p.jobId}:w${p.fence.leaseVersion}`, availableAt: due,
    }, now);
    statements.push(insert);
  }
  statements.push({ sql: `SELECT userId, statusSeq, attemptCount FROM \`AiJob\` WHERE ${matched}`, values: matchedValues });
  const results = await runAtomically(statements);
  const [parked] = results.at(-1) as { userId: string; statusSeq: number; attemptCount: number }[];
  if (!parked) throw new LeaseLostError(p.jobId, p.fence.leaseVersion);
  publishPush({
    userId: parked.userId, jobId: p.jobId,
    entries: [{
      seq: Number(parked.statusSeq), attempt: Number(parked.attemptCount), at: now.toISOString(), type: 'status', status: 'queued',
      retryAt: due.toISOString(), waitingFor: { reason: WAIT_REASON_OF_CODE[p.code] ?? p.waitingFor, until: due.toISOString() },
    }],
  });
}

/**
 * The waiting row: created, or updated for this wait. A wait after the job was admitted starts a new episode
 * (`since`); `since` is assigned before `reason` (single-table assignments run left to right).
 */
function waitRowUpsert(p: ParkRequest, matched: string, matchedValues: SqlValue[]): SqlStatement {
  const due = '{now} + INTERVAL ? MICROSECOND';
  const waitUs = Math.round(p.waitMs) * 1000;
  const route = [p.route?.provider ?? null, p.route?.model ?? null];
  return withClock(
    `INSERT INTO \`CapacityWait\` (jobId, userId, provider, model, priority, tokens, reason, dueAt, since, waits, updatedAt)
     SELECT id, userId, ?, ?, priority, ?, ?, ${due}, {now}, ?, {now} FROM \`AiJob\` WHERE ${matched}
     ON DUPLICATE KEY UPDATE since = IF(reason = 'admitted', {now}, since), provider = ?, model = ?, tokens = ?, reason = ?,
       dueAt = ${due}, waits = ?, updatedAt = {now}`,
    p.clock,
    [...route, p.tokens, p.waitingFor, waitUs, p.waits, ...matchedValues, ...route, p.tokens, p.waitingFor, waitUs, p.waits],
  );
}
