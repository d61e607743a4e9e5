/**
 * Creates the job queues of ./queue-definitions.ts through the SQS API, for emulators (fauxqs) and
 * LocalStack: tests, benchmarks and local runs. Production queues come from the CDK stack, which reads the
 * same definitions. `CreateQueue` is idempotent for equal attributes, so running this twice is harmless.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { EngineError } from '../errors.ts';
import {
  JOB_QUEUE_NAMES,
  jobQueueDefinitions,
  toSqsQueueAttributes,
  type FifoQueueSpec,
  type JobQueueDefinition,
  type QueueDefinitionOptions,
  type QueueName,
} from './queue-definitions.ts';

/** Where a created queue and its dead-letter queue are. */
export interface CreatedJobQueue {
  queueUrl: string;
  queueArn: string;
  deadLetterQueueUrl: string;
  deadLetterQueueArn: string;
}

/** The SQS API answered without the URL or ARN of a queue it just created. */
export class QueueProvisioningError extends EngineError {
  readonly code = 'QUEUE_PROVISIONING_FAILED';
}

/**
 * Creates every job queue of `stage` with its dead-letter queue and redrive policy; returns their URLs
 * and ARNs. Dead-letter queues are created first because the redrive policy names their ARN.
 */
export async function createJobQueues(
  sqs: SQSClient,
  stage: string,
  options: QueueDefinitionOptions = {},
): Promise<Record<QueueName, CreatedJobQueue>> {
  const definitions = jobQueueDefinitions(stage, options);
  const created = await Promise.all(JOB_QUEUE_NAMES.map((name) => createJobQueue(sqs, definitions[name])));
  return Object.fromEntries(JOB_QUEUE_NAMES.map((name, i) => [name, created[i]])) as Record<QueueName, CreatedJobQueue>;
}

async function createJobQueue(sqs: SQSClient, definition: JobQueueDefinition): Promise<CreatedJobQueue> {
  const dlq = await createQueue(sqs, definition.deadLetterQueue);
  const queue = await createQueue(sqs, definition.queue, {
    deadLetterTargetArn: dlq.arn,
    maxReceiveCount: definition.maxReceiveCount,
  });
  return { queueUrl: queue.url, queueArn: queue.arn, deadLetterQueueUrl: dlq.url, deadLetterQueueArn: dlq.arn };
}

async function createQueue(
  sqs: SQSClient,
  spec: FifoQueueSpec,
  redrive?: { deadLetterTargetArn: string; maxReceiveCount: number },
): Promise<{ url: string; arn: string }> {
  const { QueueUrl: url } = await sqs.send(
    new CreateQueueCommand({ QueueName: spec.name, Attributes: toSqsQueueAttributes(spec, redrive) }),
  );
  if (!url) throw new QueueProvisioningError(`CreateQueue returned no URL for ${spec.name}`);
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const arn = Attributes?.QueueArn;
  if (!arn) throw new QueueProvisioningError(`GetQueueAttributes returned no ARN for ${spec.name}`);
  return { url, arn };
}
