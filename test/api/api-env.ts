/**
 * The environment the API Lambdas read, pointed at this test file's own resources: job queues and their
 * dead-letter queues on the SQS emulator (a stage per file), a KMS key on moto for user credentials, and the
 * bus name eager dispatch needs. Call from `beforeAll`, before the first request: the handlers read the
 * environment once, on first use. Import this module first so quiet logging applies to the handlers' loggers.
 */
import { randomBytes } from 'node:crypto';
import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { QUEUE_URL_ENV, createSqsClient } from '../../lib/config/aws.ts';
import { createJobQueues, type CreatedJobQueue } from '../../lib/queue/create-queues.ts';
import type { QueueName } from '../../lib/queue/queue-definitions.ts';
import { DLQ_URL_ENV } from '../../lib/api/stats.ts';
import { createTestKmsKey } from '../credentials/fixtures.ts';

// 4xx refusals are logged at INFO; keep test output to warnings and errors.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

export interface ApiTestEnvironment {
  queues: Record<QueueName, CreatedJobQueue>;
  kmsKeyId: string;
}

export async function setUpApiEnvironment(): Promise<ApiTestEnvironment> {
  const sqs = createSqsClient();
  const stage = `api${randomBytes(4).toString('hex')}`;
  const queues = await createJobQueues(sqs, stage, { visibilityTimeoutSeconds: { interactive: 30, background: 30 } });
  for (const name of Object.keys(queues) as QueueName[]) {
    process.env[QUEUE_URL_ENV[name]] = queues[name].queueUrl;
    process.env[DLQ_URL_ENV[name]] = queues[name].deadLetterQueueUrl;
  }
  process.env.EVENT_BUS_NAME = 'default';
  const kmsKeyId = await createTestKmsKey();
  process.env.CREDENTIALS_KMS_KEY_ID = kmsKeyId;
  return { queues, kmsKeyId };
}

/** Messages visible on a queue now (received with a zero wait; left to become visible again). */
export async function receiveAll(queueUrl: string): Promise<Message[]> {
  const { Messages = [] } = await createSqsClient().send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 0 }),
  );
  return Messages;
}
