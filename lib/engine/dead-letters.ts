/**
 * A job whose message reached a dead-letter queue must not hang: the reaper reads both DLQs and ends each
 * such job `failed` with DEAD_LETTERED. It does NOT delete the messages: they stay in the DLQ (hidden for an
 * hour after each read) for operators, its alarm and the admin stats; processing them again is harmless
 * because a terminal job is left alone.
 */
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { PrismaDb } from '../db/client.ts';
import { failBeforeAttempt, markFailed } from '../jobs/lifecycle-repository.ts';
import { LeaseLostError, StaleTransitionError } from '../jobs/lifecycle-errors.ts';
import { isTerminal } from '../jobs/states.ts';
import { InvalidJobMessageError, parseJobMessage } from '../queue/job-message.ts';

export const DEAD_LETTERED = 'DEAD_LETTERED';

export interface DeadLetterCounts {
  read: number;
  failed: number;
  alreadyFinished: number;
  malformed: number;
}

export interface DeadLetterOptions {
  sqs: SQSClient;
  deadLetterQueueUrls: string[];
  /** How long a read message stays hidden before the next reaper run may see it again. */
  hideSeconds?: number;
  /** Upper bound of messages read per queue per run. */
  maxPerQueue?: number;
}

export async function reapDeadLetters(db: PrismaDb, opts: DeadLetterOptions): Promise<DeadLetterCounts> {
  const counts: DeadLetterCounts = { read: 0, failed: 0, alreadyFinished: 0, malformed: 0 };
  for (const queueUrl of opts.deadLetterQueueUrls) {
    for (let read = 0; read < (opts.maxPerQueue ?? 100);) {
      const { Messages = [] } = await opts.sqs.send(new ReceiveMessageCommand({
        QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: opts.hideSeconds ?? 3600,
      }));
      if (Messages.length === 0) break;
      read += Messages.length;
      for (const m of Messages) await failDeadLetteredJob(db, m.Body ?? '', counts);
    }
  }
  return counts;
}

async function failDeadLetteredJob(db: PrismaDb, body: string, counts: DeadLetterCounts): Promise<void> {
  counts.read += 1;
  let jobId: string;
  try {
    jobId = parseJobMessage(body).jobId;
  } catch (err) {
    if (!(err instanceof InvalidJobMessageError)) throw err;
    counts.malformed += 1;
    return;
  }
  const job = await db.aiJob.findUnique({ where: { id: jobId } });
  if (!job || isTerminal(job.lifecycleStatus)) {
    counts.alreadyFinished += 1;
    return;
  }
  const failure = {
    actor: 'reaper', reason: 'message dead-lettered', errorCode: DEAD_LETTERED,
    publicMessage: 'The job could not be processed', internalMessage: 'the job message reached the dead-letter queue',
  };
  try {
    if (job.lifecycleStatus === 'queued') await failBeforeAttempt(db, jobId, failure);
    else await markFailed(db, jobId, { holder: job.lockedBy, leaseVersion: job.leaseVersion }, failure);
    counts.failed += 1;
  } catch (err) {
    if (!(err instanceof StaleTransitionError || err instanceof LeaseLostError)) throw err;
    counts.alreadyFinished += 1;
  }
}
