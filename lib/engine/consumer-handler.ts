/**
 * Builds the Lambda handler of a consumer of one job queue. Cold start creates the engine once per container;
 * every invocation hands its batch to {@link consumeBatch}.
 *
 * The database's URL comes from its secret on a container's first batch (lib/config/database-secret.ts). When
 * Secrets Manager does not answer then, the batch is given back like any delivery failing on infrastructure:
 * each record visible again after a short backoff and reported failed, instead of the whole invocation failing
 * and its messages staying hidden for the queue's visibility timeout (9–30 min).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createSqsClient, dispatchTargetsFromEnv } from '../config/aws.ts';
import { DatabaseSecretUnavailableError, ensureDatabaseUrl } from '../config/database-secret.ts';
import type { QueueName } from '../queue/queue-definitions.ts';
import { consumeBatch, type ConsumerConfig } from './consumer.ts';
import { createEngineDeps } from './default-engine-deps.ts';
import { infrastructureRedeliverySeconds } from './delivery-guard.ts';

export function createConsumerHandler(queue: QueueName): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  let config: ConsumerConfig | undefined;
  let logger: Logger | undefined;
  return async (event: SQSEvent, context: Context) => {
    try {
      await ensureDatabaseUrl();
    } catch (err) {
      if (!(err instanceof DatabaseSecretUnavailableError)) throw err;
      return giveBack(event, queue, err, (logger ??= new Logger({ serviceName: 'ai-job-engine' })));
    }
    config ??= {
      queueUrl: dispatchTargetsFromEnv().queueUrls[queue],
      sqs: createSqsClient(),
      engine: createEngineDeps(),
    };
    return consumeBatch(event, config, context);
  };
}

/** Every record of `event` visible again after the infrastructure backoff, and reported failed. */
async function giveBack(event: SQSEvent, queue: QueueName, err: DatabaseSecretUnavailableError, logger: Pick<Logger, 'error'>): Promise<SQSBatchResponse> {
  const sqs = createSqsClient();
  const queueUrl = dispatchTargetsFromEnv().queueUrls[queue];
  try {
    await Promise.all(event.Records.map((record) => sqs.send(new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl, ReceiptHandle: record.receiptHandle,
      VisibilityTimeout: infrastructureRedeliverySeconds(Number(record.attributes?.ApproximateReceiveCount) || 1),
    })).catch((e: unknown) => logger.error('could not change message visibility', { messageId: record.messageId, error: (e as Error).name }))));
  } finally {
    sqs.destroy();
  }
  logger.error('database secret unavailable; the batch is visible again after a short backoff', { error: err.name, records: event.Records.length });
  return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
}
