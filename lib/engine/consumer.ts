/**
 * The SQS side of a consumer Lambda: records of a batch run concurrently through the engine; the response
 * lists only the records SQS must deliver again (`batchItemFailures`, partial batch failure).
 * - success, permanent failure, cancellation, duplicate delivery → acknowledged (deleted by Lambda);
 * - retryable failure → the message's visibility is set to the backoff delay, then the record is reported
 *   failed, so SQS redelivers it when the backoff is over;
 * - a malformed body → reported failed and made visible at once, so it reaches the dead-letter queue after
 *   the queue's max receive count; it never fails the other records;
 * - an infrastructure error, or a delivery outliving its bound → logged, visible again after a short
 *   backoff (./delivery-guard.ts).
 * FIFO note: messages are grouped by job id, so no two records of one group share a batch in practice; with
 * per-user groups, order inside a batch is not kept (jobs of a user are independent).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { ChangeMessageVisibilityCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { EngineError } from '../errors.ts';
import { parseJobMessage, InvalidJobMessageError } from '../queue/job-message.ts';
import type { EngineDeps } from './engine-deps.ts';
import { runJob } from './run-job.ts';
import { DEFAULT_DELIVERY_MARGIN_MS, guardDelivery } from './delivery-guard.ts';

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
}

/** The bound of one delivery: the job type's timeout (30 s when unknown) plus the margin. */
function deliveryTimeoutMs(config: ConsumerConfig, jobType: string): number {
  const { registry } = config.engine;
  const jobTimeout = registry.has(jobType) ? registry.get(jobType).execution.timeoutMs : 30_000;
  return jobTimeout + (config.deliveryMarginMs ?? DEFAULT_DELIVERY_MARGIN_MS);
}

/** SQS allows a visibility timeout up to 12 hours. */
const MAX_VISIBILITY_SECONDS = 43_200;

/** Processes one SQS batch and returns the partial batch response. */
export async function consumeBatch(event: SQSEvent, config: ConsumerConfig, context?: Context): Promise<SQSBatchResponse> {
  const processor = new BatchProcessor(EventType.SQS);
  try {
    return await processPartialResponse(event, (record: SQSRecord) => handleRecord(record, config), processor, {
      ...(context ? { context } : {}),
      throwOnFullBatchFailure: false,
      processInParallel: true,
    });
  } finally {
    config.engine.metrics.publishStoredMetrics();
  }
}

async function handleRecord(record: SQSRecord, config: ConsumerConfig): Promise<void> {
  const setVisibility = (seconds: number) =>
    config.sqs
      .send(new ChangeMessageVisibilityCommand({
        QueueUrl: config.queueUrl, ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: Math.min(Math.max(0, Math.ceil(seconds)), MAX_VISIBILITY_SECONDS),
      }))
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
    timeoutMs: deliveryTimeoutMs(config, message.jobType), logger: config.engine.logger, setVisibility,
  }, (control) => runJob(message, config.engine, control));
  if (outcome.kind === 'retry') {
    const delaySeconds = outcome.delayMs / 1000;
    await setVisibility(delaySeconds);
    throw new RedeliverLaterError(outcome.jobId, Math.ceil(delaySeconds), outcome.code);
  }
}
