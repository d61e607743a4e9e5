/**
 * The route of `ai.job.enqueue` rows: one SQS FIFO message per job on its definition's queue, sent with
 * `SendMessageBatch` (≤ 10 entries per call) and judged entry by entry — a failed entry retries alone.
 *
 * Message: the frozen body of lib/queue/job-message.ts, built from the job row (jobType, createdAt) and the
 * outbox row (dedupeKey). `MessageDeduplicationId` = the dedupe key, `MessageGroupId` = the row's
 * `messageGroupId` (the job id, or the user id for per-user ordering), falling back to the job id.
 */
import { createHash } from 'node:crypto';
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import type { Prisma } from '../db/client.ts';
import type { SqlRunner } from '../db/sql-pool.ts';
import { failBeforeAttempt } from '../jobs/lifecycle-repository.ts';
import { JobNotFoundError, StaleTransitionError } from '../jobs/lifecycle-errors.ts';
import { encodeJobMessage, InvalidJobMessageError } from '../queue/job-message.ts';
import type { QueueName } from '../queue/queue-definitions.ts';
import { enqueuePayloadSchema } from './event-types.ts';
import { placeholders, type DispatchRow } from './outbox-claims.ts';
import { chunk, describeError } from './send-helpers.ts';
import type { SendContext, SendOutcome } from './routes.ts';

/** The job error code when its enqueue row is given up (ADR-003 §4.4): the job must not wait forever. */
export const DISPATCH_FAILED = 'DISPATCH_FAILED';

/** SQS's limit on entries per `SendMessageBatch`. */
const SQS_BATCH_LIMIT = 10;

interface PreparedEntry {
  queueUrl: string;
  entry: SendMessageBatchRequestEntry & { Id: string };
}

/** Builds the `send` of the enqueue route for these queues. */
export function createJobMessageSender(sqs: SQSClient, queueUrls: Record<QueueName, string>) {
  return async (rows: readonly DispatchRow[], ctx: SendContext): Promise<SendOutcome[]> => {
    const unknown = rows.map((r) => r.aggregateId).filter((id) => !ctx.knownJobs?.has(id));
    const jobs = new Map([...(ctx.knownJobs ?? []), ...(await findJobsForMessages(ctx.sql, unknown))]);
    const outcomes: SendOutcome[] = [];
    const byQueue = new Map<string, PreparedEntry['entry'][]>();
    for (const row of rows) {
      const prepared = prepareEntry(row, jobs.get(row.aggregateId), queueUrls);
      if ('result' in prepared) outcomes.push(prepared);
      else if (byQueue.has(prepared.queueUrl)) byQueue.get(prepared.queueUrl)?.push(prepared.entry);
      else byQueue.set(prepared.queueUrl, [prepared.entry]);
    }
    const calls = [...byQueue].flatMap(([url, entries]) => chunk(entries, SQS_BATCH_LIMIT).map((c) => sendBatch(sqs, url, c, ctx.signal)));
    for (const sent of await Promise.all(calls)) outcomes.push(...sent);
    return outcomes;
  };
}

/**
 * The enqueue route's give-up hook: moves the job `queued → failed` with `DISPATCH_FAILED` through the
 * lifecycle repository, in the caller's transaction (the repository also writes the `ai.job.failed` event
 * there). A job that is no longer queued (already running, cancelled) or gone needs nothing.
 */
export async function failJobThatCannotBeQueued(tx: Prisma.TransactionClient, row: DispatchRow, reason: string): Promise<void> {
  try {
    await failBeforeAttempt(tx, row.aggregateId, {
      errorCode: DISPATCH_FAILED,
      publicMessage: 'The job could not be queued for execution.',
      internalMessage: `outbox event ${row.id}: ${reason}`.slice(0, 1024),
      actor: 'dispatcher',
      reason: 'message could not be dispatched',
    });
  } catch (err) {
    if (err instanceof StaleTransitionError || err instanceof JobNotFoundError) return;
    throw err;
  }
}

/**
 * A dedupe key as an SQS deduplication id (≤ 128 printable ASCII characters). Longer or unusual keys are
 * replaced by their SHA-256, which is just as stable, so dedupe still holds across re-sends.
 */
export function toDeduplicationId(dedupeKey: string): string {
  return /^[\x21-\x7e]{1,128}$/.test(dedupeKey) ? dedupeKey : createHash('sha256').update(dedupeKey).digest('hex');
}

function prepareEntry(
  row: DispatchRow,
  job: { jobType: string; createdAt: Date } | undefined,
  queueUrls: Record<QueueName, string>,
): PreparedEntry | SendOutcome {
  const reject = (code: string, error: string): SendOutcome => ({ id: row.id, result: 'reject', code, error });
  const payload = enqueuePayloadSchema.safeParse(row.payload);
  if (!payload.success || payload.data.jobId !== row.aggregateId) {
    return reject('INVALID_PAYLOAD', 'enqueue payload must be exactly { jobId } of the aggregate');
  }
  const queueName = row.queueName ?? '';
  if (!Object.hasOwn(queueUrls, queueName)) return reject('UNKNOWN_QUEUE', `no queue is configured for "${queueName}"`);
  if (!job) return reject('JOB_NOT_FOUND', 'the job of this enqueue row does not exist');
  let body: string;
  try {
    body = encodeJobMessage({
      jobId: row.aggregateId, jobType: job.jobType, idempotencyKey: row.dedupeKey, createdAt: job.createdAt.toISOString(),
    });
  } catch (err) {
    if (err instanceof InvalidJobMessageError) return reject(err.code, err.message);
    throw err;
  }
  return {
    queueUrl: queueUrls[queueName as QueueName],
    entry: {
      Id: row.id,
      MessageBody: body,
      MessageGroupId: row.messageGroupId ?? row.aggregateId,
      MessageDeduplicationId: toDeduplicationId(row.dedupeKey),
    },
  };
}

async function sendBatch(
  sqs: SQSClient, queueUrl: string, entries: PreparedEntry['entry'][], signal: AbortSignal | undefined,
): Promise<SendOutcome[]> {
  let response;
  try {
    response = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }), signal ? { abortSignal: signal } : {});
  } catch (err) {
    const error = describeError(err);
    return entries.map((e) => ({ id: e.Id, result: 'retry', error }));
  }
  const sent = new Set((response.Successful ?? []).map((s) => s.Id));
  const failed = new Map((response.Failed ?? []).map((f) => [f.Id, `${f.Code ?? 'Failed'}: ${f.Message ?? ''}`]));
  return entries.map((e): SendOutcome =>
    sent.has(e.Id) ? { id: e.Id, result: 'sent' } : { id: e.Id, result: 'retry', error: failed.get(e.Id) ?? 'no result for entry' },
  );
}

/** Reads the two job columns the message needs (once per batch). Never input, user or credential. */
async function findJobsForMessages(sql: SqlRunner, jobIds: string[]): Promise<Map<string, { jobType: string; createdAt: Date }>> {
  if (jobIds.length === 0) return new Map();
  const jobs = (await sql.query(
    `SELECT id, jobType, createdAt FROM AiJob WHERE id IN (${placeholders(jobIds.length)})`, jobIds,
  )) as { id: string; jobType: string; createdAt: Date }[];
  return new Map(jobs.map((j) => [j.id, j]));
}
