/**
 * bench:capacity counts SQS calls at the wire: the counting proxy in front of the suite's SQS server sees each
 * call the AWS SDK makes, the entries of batch calls, and which receives returned messages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateQueueCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { countsBetween, startAwsCallCounter, type AwsCallCounter, type AwsCallCounts } from '../../bench/capacity/aws-call-counter.ts';

let counter: AwsCallCounter;
let sqs: SQSClient;

beforeAll(async () => {
  counter = await startAwsCallCounter(process.env.AWS_ENDPOINT_URL_SQS!);
  sqs = new SQSClient({ endpoint: counter.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
});

afterAll(async () => {
  sqs?.destroy();
  await counter?.close();
});

describe('the AWS call counter', () => {
  it('counts each call by action, batch entries, and the receives that returned messages', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `counter-${process.pid}-${Date.now()}` }));
    const before = counter.counts();
    await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: ['a', 'b', 'c'].map((body, i) => ({ Id: String(i), MessageBody: body })) }));
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl, Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
    await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));

    const seen = countsBetween(before, counter.counts());
    expect(Messages.length).toBe(3);
    expect(seen).toEqual({
      requests: { SendMessageBatch: 1, ReceiveMessage: 2, DeleteMessageBatch: 1 },
      entries: { SendMessageBatch: 3, DeleteMessageBatch: 3 },
      receivesWithMessages: 1,
      messagesReceived: 3,
    });
  });

  it('tells its counts over HTTP, as the bench reads them from another process', async () => {
    const told = (await (await fetch(counter.countsUrl)).json()) as AwsCallCounts;
    expect(told).toEqual(counter.counts());
    expect(told.requests.CreateQueue).toBe(1);
  });
});
