/**
 * Plays the Lambda SQS event source locally: long-polls a queue, hands each batch to the consumer exactly as
 * Lambda would (an SQS event of at most `batchSize` records), then deletes the records not reported in
 * `batchItemFailures`. What it bounds is the records in flight, `concurrency` × `batchSize`, not the batches. On
 * AWS a batch holds a container of its own until its slowest record is done. Here every batch shares one thread,
 * so a batch's slot guards nothing the records bound does not; kept until the batch's last record was done, it
 * only made the next message wait (bench:peers at 0.8 of capacity: 11 ms of a 21 ms hand-off, docs/performance.md).
 * So a message that arrives while small batches run is received at once, and a backlog is still taken
 * `batchSize` records a batch, `concurrency` batches at once. Failed records stay in flight until their
 * visibility timeout (which the consumer may have set to a retry delay) ends. A batch whose handler throws is
 * reported to `onError` and not deleted: its records come back after the visibility timeout.
 *
 * Deletes are the event source's bookkeeping, not the consumer's, so the batches of a queue share one
 * {@link DeleteBatcher}: acknowledged records are deleted together, up to 10 per DeleteMessageBatch, at most
 * {@link DELETE_BATCH_WINDOW_MS} after the first of them (at bench:peers' 150–200 jobs/s, several records per
 * call instead of a call per job). Nothing waits for the deletes. Until its delete a record only stays in
 * flight a little longer: in a FIFO queue its group's next message waits those few milliseconds, and after a
 * crash SQS delivers the record again, which the engine acknowledges as a duplicate.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export interface PollerOptions {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  handle(event: SQSEvent): Promise<SQSBatchResponse>;
  /** Lambda's concurrency for this queue: with `batchSize`, the records in flight at most (`concurrency` × `batchSize`). */
  concurrency: number;
  batchSize: number;
  onError(err: unknown): void;
  /** How long an acknowledged record may wait for others to share its delete (default {@link DELETE_BATCH_WINDOW_MS}). */
  deleteWindowMs?: number;
}

export interface Poller {
  /** Stops receiving; resolves when every in-flight batch has been handled and its records deleted. */
  stop(): Promise<void>;
}

/** Longest wait of an acknowledged record for a shared DeleteMessageBatch. */
export const DELETE_BATCH_WINDOW_MS = 20;

/** SQS takes at most 10 entries per DeleteMessageBatch. */
const MAX_DELETE_ENTRIES = 10;

export function startPoller(o: PollerOptions): Poller {
  let running = true;
  const deletes = new DeleteBatcher(o.sqs, o.queueUrl, o.deleteWindowMs ?? DELETE_BATCH_WINDOW_MS, o.onError);
  const inFlight = new Set<Promise<void>>();
  const maxRecords = o.concurrency * o.batchSize;
  let records = 0;
  // One receiver per queue, handing each batch to an invocation of its own, while fewer than `maxRecords` records are in flight.
  // (Several receivers long-polling one queue: the SQS emulator answers every waiting receive when a message
  // arrives, all but one of them empty, which measured two empty receives per message at four receivers.)
  const receiver = (async () => {
    while (running) {
      if (records >= maxRecords) {
        await Promise.race(inFlight);
        continue;
      }
      let messages: Message[];
      try {
        ({ Messages: messages = [] } = await o.sqs.send(new ReceiveMessageCommand({
          QueueUrl: o.queueUrl, MaxNumberOfMessages: Math.min(o.batchSize, maxRecords - records), WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'],
        })));
      } catch (err) {
        o.onError(err);
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (messages.length === 0) continue;
      records += messages.length;
      const invocation: Promise<void> = o.handle(toSqsEvent(messages, o.queueArn))
        .then((response) => deletes.add(acknowledged(messages, response)), (err: unknown) => o.onError(err))
        .finally(() => {
          records -= messages.length;
          inFlight.delete(invocation);
        });
      inFlight.add(invocation);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await receiver;
      await Promise.all(inFlight);
      await deletes.drain();
    },
  };
}

/**
 * Deletes the receipts it is given in shared DeleteMessageBatch calls: at once when 10 are waiting, else
 * `windowMs` after the first one. A failed call is reported to `onError`; its records become visible again
 * when their visibility timeout ends, as after any lost delete.
 */
export class DeleteBatcher {
  private waiting: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly sqs: SQSClient, private readonly queueUrl: string, private readonly windowMs: number, private readonly onError: (err: unknown) => void) {}

  add(receiptHandles: string[]): void {
    this.waiting.push(...receiptHandles);
    while (this.waiting.length >= MAX_DELETE_ENTRIES) this.send(this.waiting.splice(0, MAX_DELETE_ENTRIES));
    if (this.waiting.length > 0) this.timer ??= setTimeout(() => this.flush(), this.windowMs);
    else this.clearTimer();
  }

  /** Sends whatever waits and resolves once every delete sent so far has been answered. */
  async drain(): Promise<void> {
    this.flush();
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private flush(): void {
    this.clearTimer();
    while (this.waiting.length > 0) this.send(this.waiting.splice(0, MAX_DELETE_ENTRIES));
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private send(receiptHandles: string[]): void {
    const call: Promise<void> = deleteReceipts(this.sqs, this.queueUrl, receiptHandles)
      .catch((err: unknown) => this.onError(err))
      .finally(() => this.inFlight.delete(call));
    this.inFlight.add(call);
  }
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

/** The receipt handles of the records the handler did not report as failed. */
export function acknowledged(messages: Message[], response: SQSBatchResponse): string[] {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  return messages.filter((m) => !failed.has(m.MessageId ?? '') && m.ReceiptHandle).map((m) => m.ReceiptHandle!);
}

/** What the Lambda service does after a batch: delete every record the handler did not report as failed. */
export async function deleteAcknowledged(sqs: SQSClient, queueUrl: string, messages: Message[], response: SQSBatchResponse): Promise<void> {
  await deleteReceipts(sqs, queueUrl, acknowledged(messages, response));
}

/**
 * One DeleteMessageBatch of up to 10 receipts; throws when SQS refuses any entry (a receipt from an
 * earlier receive, a message already gone), naming how many.
 */
async function deleteReceipts(sqs: SQSClient, queueUrl: string, receiptHandles: string[]): Promise<void> {
  if (receiptHandles.length === 0) return;
  const { Failed = [] } = await sqs.send(new DeleteMessageBatchCommand({
    QueueUrl: queueUrl,
    Entries: receiptHandles.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle })),
  }));
  if (Failed.length > 0) throw new Error(`SQS refused ${Failed.length} of ${receiptHandles.length} deletes: ${Failed[0]?.Code ?? 'unknown'} ${Failed[0]?.Message ?? ''}`.trim());
}
