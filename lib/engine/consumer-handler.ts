/**
 * Builds the Lambda handler of a consumer of one job queue. Cold start creates the engine once per container;
 * every invocation hands its batch to {@link consumeBatch}.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createSqsClient, dispatchTargetsFromEnv } from '../config/aws.ts';
import { withDatabase } from '../config/with-database.ts';
import type { QueueName } from '../queue/queue-definitions.ts';
import { consumeBatch, type ConsumerConfig } from './consumer.ts';
import { createEngineDeps } from './default-engine-deps.ts';

export function createConsumerHandler(queue: QueueName): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  let config: ConsumerConfig | undefined;
  return withDatabase(async (event: SQSEvent, context: Context) => {
    config ??= {
      queueUrl: dispatchTargetsFromEnv().queueUrls[queue],
      sqs: createSqsClient(),
      engine: createEngineDeps(),
    };
    return consumeBatch(event, config, context);
  });
}
