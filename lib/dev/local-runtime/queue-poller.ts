/**
 * Plays the Lambda SQS event source locally: long-polls a queue, hands each batch to the consumer exactly as
 * Lambda would (an SQS event), then deletes the records not reported in `batchItemFailures`. Failed records
 * stay in flight until their visibility timeout (which the consumer may have set to a retry delay) ends.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export interface PollerOptions {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  handle(event: SQSEvent): Promise<SQSBatchResponse>;
  /** Concurrent pollers (Lambda's concurrency for this queue). */
  concurrency: number;
  batchSize: number;
  onError(err: unknown): void;
}

export interface Poller {
  /** Stops receiving; resolves when every in-flight batch has been handled. */
  stop(): Promise<void>;
}

export function startPoller(o: PollerOptions): Poller {
  let running = true;
  const loop = async () => {
    while (running) {
      try {
        const { Messages = [] } = await o.sqs.send(new ReceiveMessageCommand({
          QueueUrl: o.queueUrl, MaxNumberOfMessages: o.batchSize, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'],
        }));
        if (Messages.length === 0) continue;
        const response = await o.handle(toSqsEvent(Messages, o.queueArn));
        await deleteAcknowledged(o.sqs, o.queueUrl, Messages, response);
      } catch (err) {
        o.onError(err);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const loops = Array.from({ length: o.concurrency }, loop);
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The event Lambda's SQS event source builds for received messages. */
export function toSqsEvent(messages: Message[], queueArn: string): SQSEvent {
  const region = queueArn.split(':')[3] ?? 'us-east-1';
  return {
    Records: messages.map((m): SQSRecord => ({
      messageId: m.MessageId ?? '', receiptHandle: m.ReceiptHandle ?? '', body: m.Body ?? '',
      attributes: (m.Attributes ?? {}) as unknown as SQSRecord['attributes'], messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '', eventSource: 'aws:sqs', eventSourceARN: queueArn, awsRegion: region,
    })),
  };
}

/** What the Lambda service does after a batch: delete every record the handler did not report as failed. */
export async function deleteAcknowledged(sqs: SQSClient, queueUrl: string, messages: Message[], response: SQSBatchResponse): Promise<void> {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
  if (done.length === 0) return;
  await sqs.send(new DeleteMessageBatchCommand({
    QueueUrl: queueUrl,
    Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
  }));
}
