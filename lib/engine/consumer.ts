/**
 * The SQS side of a consumer Lambda: the response lists only the records SQS must deliver again
 * (`batchItemFailures`, partial batch failure).
 * - success, permanent failure, cancellation, duplicate delivery → acknowledged (deleted by Lambda);
 * - retryable failure, or a job parked to wait for provider capacity or a spending cap → the message's
 *   visibility is set to the backoff delay (the wait), then the record is reported failed, so SQS redelivers it
 *   when the backoff is over; a job handed to a new message (a long wait) is acknowledged;
 * - a malformed body → reported failed and made visible at once, so it reaches the dead-letter queue after
 *   the queue's max receive count; it fails only the later records of its own message group (below);
 * - an infrastructure error, or a delivery outliving its bound → logged, visible again after a short
 *   backoff (./delivery-guard.ts). A delivery outliving its bound is abandoned, and the handler waits for its
 *   run to stop before it answers: the invocation never returns with work of its own still running.
 *
 * FIFO order: a batch may hold several records of one message group (definitions with `messageGroup: 'user'`
 * put a user's jobs in one group; a job the reaper re-enqueues gets a group of its own, so it never waits behind a hidden original). Records of one group
 * run one after another, in batch order, through Powertools' `SqsFifoPartialProcessorAsync` with
 * `skipGroupOnError`: after a failed record every later record of its group is reported failed unprocessed,
 * so SQS redelivers the group from the failed record on, in order. Different groups run in parallel, as
 * they would on different consumers.
 */
import { SqsFifoPartialProcessorAsync, processPartialResponse } from '@aws-lambda-powertools/batch';
import { ChangeMessageVisibilityCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { EngineError } from '../errors.ts';
import { parseJobMessage, InvalidJobMessageError } from '../queue/job-message.ts';
import { needsRedelivery } from './outcome.ts';
import type { EngineDeps } from './engine-deps.ts';
import { runJob } from './run-job.ts';
import { DEFAULT_DELIVERY_MARGIN_MS, guardDelivery } from './delivery-guard.ts';

/** How long one SQS call of the consumer (a visibility change) may take before it is abandoned. */
export const SQS_CALL_TIMEOUT_MS = 3_000;

/** Thrown for a record SQS must redeliver after `delaySeconds` (never escapes the batch). */
export class RedeliverLaterError extends EngineError {
  readonly code = 'REDELIVER_LATER';
  constructor(readonly jobId: string, readonly delaySeconds: number, readonly errorCode: string) {
    super(`job ${jobId}: ${errorCode}, redelivery in ${delaySeconds}s`);
  }
}

export interface ConsumerConfig {
  queueUrl: string;
  sqs: SQSClient;
  engine: EngineDeps;
  /** Added to the job type's timeout to bound one delivery (default {@link DEFAULT_DELIVERY_MARGIN_MS}). */
  deliveryMarginMs?: number;
  /** Aborted when the consumer stops (the local runtime's shutdown): running deliveries are abandoned at once. */
  stopping?: AbortSignal;
}

/** Time kept back from the Lambda's deadline to give the message back and answer the batch. */
export const INVOCATION_RESERVE_MS = 5_000;

/** Time kept between an abandoned delivery and the reserve, for its run to stop (./delivery-guard.ts). */
export const STOP_RESERVE_MS = 15_000;

/** Without an invocation deadline (the local runtime), how long an abandoned delivery's run may take to stop. */
export const STOP_BUDGET_WITHOUT_DEADLINE_MS = 60_000;

/**
 * The bound of one delivery: the job type's timeout (30 s when unknown) plus the margin, and never past the
 * invocation's own deadline less {@link INVOCATION_RESERVE_MS} and {@link STOP_RESERVE_MS} — Lambda kills a
 * call at its timeout, and then the message would stay hidden for the whole visibility timeout with nothing
 * logged; the stop reserve is the time the abandoned run gets to stop before the handler answers.
 */
function deliveryTimeoutMs(config: ConsumerConfig, jobType: string, context?: Pick<Context, 'getRemainingTimeInMillis'>): number {
  const { registry } = config.engine;
  const jobTimeout = registry.has(jobType) ? registry.get(jobType).execution.timeoutMs : 30_000;
  const bound = jobTimeout + (config.deliveryMarginMs ?? DEFAULT_DELIVERY_MARGIN_MS);
  const remaining = context?.getRemainingTimeInMillis?.();
  return remaining === undefined ? bound : Math.max(1_000, Math.min(bound, remaining - INVOCATION_RESERVE_MS - STOP_RESERVE_MS));
}

/** How long an abandoned delivery waits for its run: the invocation's remaining time less the reserve, read then. */
function stopBudgetMs(context?: Pick<Context, 'getRemainingTimeInMillis'>): number {
  const remaining = context?.getRemainingTimeInMillis?.();
  return remaining === undefined ? STOP_BUDGET_WITHOUT_DEADLINE_MS : remaining - INVOCATION_RESERVE_MS;
}

/** SQS allows a visibility timeout up to 12 hours. */
const MAX_VISIBILITY_SECONDS = 43_200;

/**
 * Processes one SQS batch and returns the partial batch response: message groups in parallel, the records of
 * a group in order, skipping (reporting failed) the rest of a group after its first failure.
 */
export async function consumeBatch(event: SQSEvent, config: ConsumerConfig, context?: Context): Promise<SQSBatchResponse> {
  try {
    const responses = await Promise.all(byMessageGroup(event.Records).map((Records) =>
      processPartialResponse({ Records }, (record: SQSRecord) => handleRecord(record, config, context), new SqsFifoPartialProcessorAsync(), {
        ...(context ? { context } : {}),
        skipGroupOnError: true,
        throwOnFullBatchFailure: false,
      })));
    const failed = new Set(responses.flatMap((r) => r.batchItemFailures.map((f) => f.itemIdentifier)));
    return { batchItemFailures: event.Records.filter((r) => failed.has(r.messageId)).map((r) => ({ itemIdentifier: r.messageId })) };
  } finally {
    config.engine.metrics.publishStoredMetrics();
  }
}

/** The batch's records per message group, each group in batch order (no group id: a group of its own). */
export function byMessageGroup(records: readonly SQSRecord[]): SQSRecord[][] {
  const groups = new Map<string, SQSRecord[]>();
  for (const record of records) {
    const key = record.attributes?.MessageGroupId ?? `message:${record.messageId}`;
    groups.set(key, [...(groups.get(key) ?? []), record]);
  }
  return [...groups.values()];
}

async function handleRecord(record: SQSRecord, config: ConsumerConfig, context?: Context): Promise<void> {
  // Bounded: an SQS endpoint that accepts and never answers must not hold the delivery (or its lease keeper).
  const setVisibility = (seconds: number) =>
    config.sqs
      .send(new ChangeMessageVisibilityCommand({
        QueueUrl: config.queueUrl, ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: Math.min(Math.max(0, Math.ceil(seconds)), MAX_VISIBILITY_SECONDS),
      }), { abortSignal: AbortSignal.timeout(SQS_CALL_TIMEOUT_MS) })
      .then(() => undefined);
  let message;
  try {
    message = parseJobMessage(record.body);
  } catch (err) {
    config.engine.logger.error('malformed job message', { messageId: record.messageId, error: (err as Error).name });
    if (err instanceof InvalidJobMessageError) await setVisibility(0).catch(() => undefined);
    throw err;
  }
  const outcome = await guardDelivery({
    jobId: message.jobId, receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
    timeoutMs: deliveryTimeoutMs(config, message.jobType, context), logger: config.engine.logger, setVisibility,
    stopBudgetMs: () => stopBudgetMs(context), leaseSeconds: Math.ceil(config.engine.timing.leaseMs / 1000),
    ...(config.stopping ? { stopping: config.stopping } : {}),
  }, (control) => runJob(message, config.engine, control));
  if (needsRedelivery(outcome)) {
    const delaySeconds = outcome.delayMs / 1000;
    await setVisibility(delaySeconds);
    throw new RedeliverLaterError(outcome.jobId, Math.ceil(delaySeconds), outcome.code);
  }
}
