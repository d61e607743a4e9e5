/**
 * A consumer Lambda whose first batch cannot read the database secret (Secrets Manager unreachable) gives the
 * batch back after the short infrastructure backoff, instead of failing the invocation and leaving its messages
 * hidden for the queue's visibility timeout (lib/engine/consumer-handler.ts). Real queue on the SQS server.
 */
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { createConsumerHandler } from '../../lib/engine/consumer-handler.ts';
import { toSqsEvent } from '../../lib/dev/local-runtime/queue-poller.ts';
import { createTestQueues, testSqsClient } from '../helpers/outbox-factories.ts';
import { freePort } from '../helpers/ports.ts';

const sqs = testSqsClient();
const KEYS = ['DATABASE_URL', 'DATABASE_SECRET_ARN', 'AWS_ENDPOINT_URL_SECRETS_MANAGER', 'AWS_MAX_ATTEMPTS', 'INTERACTIVE_QUEUE_URL', 'BACKGROUND_QUEUE_URL', 'EVENT_BUS_NAME'] as const;
const saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
afterAll(() => {
  for (const k of KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe('a consumer whose database secret cannot be read', () => {
  it('reports every record failed and makes each visible again after the short backoff (5 s), not the visibility timeout', async () => {
    const { queues, queueUrls } = await createTestQueues(sqs, { visibilityTimeoutSeconds: { interactive: 600, background: 600 } });
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrls.interactive, MessageBody: '{"jobId":"x"}', MessageGroupId: 'g', MessageDeduplicationId: 'd1' }));
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrls.interactive, WaitTimeSeconds: 5, MessageSystemAttributeNames: ['All'] }));
    expect(Messages).toHaveLength(1);

    delete process.env.DATABASE_URL;
    process.env.DATABASE_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:db';
    process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${await freePort()}`;
    process.env.AWS_MAX_ATTEMPTS = '1';
    process.env.INTERACTIVE_QUEUE_URL = queueUrls.interactive;
    process.env.BACKGROUND_QUEUE_URL = queueUrls.background;
    process.env.EVENT_BUS_NAME = 'default';
    const handler = createConsumerHandler('interactive');
    const response = await handler(toSqsEvent(Messages, queues.interactive.queueArn), { getRemainingTimeInMillis: () => 60_000 } as Context);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: Messages[0]!.MessageId }] });

    // Back within seconds (the queue would have hidden it for 600 s).
    const started = Date.now();
    let again: unknown[] = [];
    while (again.length === 0 && Date.now() - started < 30_000) {
      ({ Messages: again = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrls.interactive, WaitTimeSeconds: 5 })));
    }
    expect(again).toHaveLength(1);
  }, 60_000);
});
