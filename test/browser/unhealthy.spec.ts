/** The overview flags a dead-letter queue that holds messages, and clears the flag once it is empty. */
import { GetQueueUrlCommand, PurgeQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_STAGE } from '../../lib/dev/local-runtime/local-aws.ts';
import { deadLetterQueueName } from '../../lib/queue/queue-definitions.ts';
import { expect, screenshot, signIn, test } from './fixtures.ts';

test('a message in a dead-letter queue is highlighted on the overview until the queue is empty again', async ({ page }) => {
  const sqs = new SQSClient({ endpoint: process.env.CONSOLE_SQS_ENDPOINT, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: deadLetterQueueName(LOCAL_STAGE, 'interactive') }));
  await signIn(page);
  const dlq = page.getByTestId('dlq-interactive');
  await expect(dlq).toHaveClass(/\bhealthy\b/);
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: '{"not":"a job"}', MessageGroupId: 'console-test', MessageDeduplicationId: `console-${Date.now()}` }));
  // The page refreshes itself: no reload.
  await expect(dlq).toHaveClass(/\bunhealthy\b/);
  await expect(dlq).toContainText('needs attention');
  await screenshot(page, 'overview-unhealthy');
  await sqs.send(new PurgeQueueCommand({ QueueUrl }));
  await expect(dlq).toHaveClass(/\bhealthy\b/);
  await expect(dlq).not.toContainText('needs attention');
});
