/**
 * The local runtime's SQS event source (lib/dev/local-runtime/queue-poller.ts) on a real FIFO queue of the
 * SQS emulator: acknowledged records are deleted in shared DeleteMessageBatch calls (counted by a middleware
 * on the real client, which only observes), records reported failed are not deleted, and a stop deletes
 * whatever still waits before it resolves.
 */
import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqsClient } from '../../lib/config/aws.ts';
import { DeleteBatcher, startPoller } from '../../lib/dev/local-runtime/queue-poller.ts';
import { workerExecArgv } from '../../lib/dev/local-runtime/consumers.ts';
import { freePort, waitFor } from '../helpers/ports.ts';

let sqs: SQSClient;
/** Entries of each DeleteMessageBatch the client sent, in order. */
const deleteCalls: number[] = [];
const queues: string[] = [];

beforeAll(() => {
  sqs = createSqsClient();
  sqs.middlewareStack.add((next, context) => async (args) => {
    if (context.commandName === 'DeleteMessageBatchCommand') deleteCalls.push((args.input as { Entries: unknown[] }).Entries.length);
    return next(args);
  }, { step: 'initialize', name: 'countDeletes' });
});
afterAll(async () => {
  await Promise.all(queues.map((QueueUrl) => sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined)));
  sqs.destroy();
});

/** A fresh FIFO queue holding `n` messages, each in a group of its own (so one receive can return 10). */
async function queueWith(n: number): Promise<string> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({
    QueueName: `event-source-${randomBytes(4).toString('hex')}.fifo`,
    Attributes: { FifoQueue: 'true', VisibilityTimeout: '60' },
  }));
  queues.push(QueueUrl!);
  for (let i = 0; i < n; i += 10) {
    await sqs.send(new SendMessageBatchCommand({
      QueueUrl, Entries: Array.from({ length: Math.min(10, n - i) }, (_, j) => ({
        Id: `m${i + j}`, MessageBody: `message ${i + j}`, MessageGroupId: `g${i + j}`, MessageDeduplicationId: `d${i + j}`,
      })),
    }));
  }
  return QueueUrl!;
}

/** Visible and in-flight message counts. */
async function counts(queueUrl: string): Promise<{ visible: number; inFlight: number }> {
  const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({
    QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
  }));
  return { visible: Number(Attributes.ApproximateNumberOfMessages), inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible) };
}

async function receiveAll(queueUrl: string, n: number): Promise<Message[]> {
  const messages: Message[] = [];
  while (messages.length < n) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    messages.push(...Messages);
  }
  return messages;
}

describe('DeleteBatcher', () => {
  it('deletes 25 receipts added one by one in three calls of 10, 10 and 5', async () => {
    const queueUrl = await queueWith(25);
    const messages = await receiveAll(queueUrl, 25);
    const before = deleteCalls.length;
    const errors: unknown[] = [];
    const batcher = new DeleteBatcher(sqs, queueUrl, 60_000, (err) => errors.push(err));
    for (const m of messages) batcher.add([m.ReceiptHandle!]);
    await batcher.drain();
    expect(deleteCalls.slice(before)).toEqual([10, 10, 5]);
    expect(errors).toEqual([]);
    expect(await counts(queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('sends what waits once its window has passed, without a drain', async () => {
    const queueUrl = await queueWith(3);
    const messages = await receiveAll(queueUrl, 3);
    const before = deleteCalls.length;
    const batcher = new DeleteBatcher(sqs, queueUrl, 50, (err) => { throw err; });
    batcher.add([messages[0]!.ReceiptHandle!]);
    batcher.add(messages.slice(1).map((m) => m.ReceiptHandle!));
    await waitFor(async () => (await counts(queueUrl)).inFlight === 0, 'the window to send the deletes');
    expect(deleteCalls.slice(before)).toEqual([3]);
  });

  it('reports a delete that fails to onError instead of dropping it silently', async () => {
    // An endpoint where nothing listens: the call fails at once (fauxqs accepts any receipt handle, so a
    // refusal by the queue itself cannot be provoked here).
    const unreachable = new SQSClient({ endpoint: `http://127.0.0.1:${await freePort()}`, region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    const errors: unknown[] = [];
    const batcher = new DeleteBatcher(unreachable, 'http://127.0.0.1/000000000000/gone.fifo', 10, (err) => errors.push(err));
    batcher.add(['receipt-1', 'receipt-2']);
    await batcher.drain();
    unreachable.destroy();
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toMatch(/ECONNREFUSED/);
  });
});

describe('startPoller', () => {
  it('hands out every message, deletes the acknowledged ones in shared calls and leaves a failed record in flight', async () => {
    const queueUrl = await queueWith(30);
    const seen = new Set<string>();
    let events = 0;
    const failBody = 'message 7';
    const before = deleteCalls.length;
    const poller = startPoller({
      sqs, queueUrl, queueArn: 'arn:aws:sqs:us-east-1:000000000000:event-source.fifo', concurrency: 4, batchSize: 10,
      deleteWindowMs: 200,
      onError: (err) => { throw err; },
      handle: async (event: SQSEvent) => {
        events += 1;
        for (const r of event.Records) seen.add(r.body);
        return { batchItemFailures: event.Records.filter((r) => r.body === failBody).map((r) => ({ itemIdentifier: r.messageId })) };
      },
    });
    await waitFor(async () => seen.size === 30, 'every message handled');
    await poller.stop();
    const calls = deleteCalls.slice(before);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(29);
    // Every call but the last carries 10 receipts or everything acknowledged within its window.
    expect(calls.length).toBeLessThanOrEqual(events);
    expect(await counts(queueUrl)).toEqual({ visible: 0, inFlight: 1 });
  });

  it('runs at most `concurrency` batches at once, from one receiver that asks SQS again only for free slots', async () => {
    // 12 messages, each a batch of its own (batch size 1); a batch finishes only when released.
    const queueUrl = await queueWith(12);
    let running = 0;
    let most = 0;
    let handled = 0;
    const waiting: (() => void)[] = [];
    const poller = startPoller({
      sqs, queueUrl, queueArn: 'arn:aws:sqs:us-east-1:000000000000:event-source.fifo', concurrency: 3, batchSize: 1,
      onError: (err) => { throw err; },
      handle: async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((release) => waiting.push(release));
        running -= 1;
        handled += 1;
        return { batchItemFailures: [] };
      },
    });
    while (handled < 12) {
      await waitFor(async () => waiting.length > 0 || handled === 12, 'a batch to hold');
      // Let the receiver run while three batches are held: it must not start a fourth.
      await waitFor(async () => running === Math.min(3, 12 - handled), 'the free slots to fill');
      waiting.shift()?.();
    }
    await poller.stop();
    expect(most).toBe(3);
    expect(await counts(queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('bounds the records in flight, not the batches: a message arriving while small batches run is received at once', async () => {
    // concurrency 2 × batchSize 3: at most 6 records in flight, here as 6 batches of 1 (one message sent at a time).
    const queueUrl = await queueWith(0);
    const held: (() => void)[] = [];
    let records = 0;
    let handled = 0;
    const poller = startPoller({
      sqs, queueUrl, queueArn: 'arn:aws:sqs:us-east-1:000000000000:event-source.fifo', concurrency: 2, batchSize: 3,
      onError: (err) => { throw err; },
      handle: async (event: SQSEvent) => {
        records += event.Records.length;
        await new Promise<void>((release) => held.push(release));
        records -= event.Records.length;
        handled += event.Records.length;
        return { batchItemFailures: [] };
      },
    });
    const send = (i: number) => sqs.send(new SendMessageBatchCommand({
      QueueUrl: queueUrl, Entries: [{ Id: `m${i}`, MessageBody: `message ${i}`, MessageGroupId: `g${i}`, MessageDeduplicationId: `d${i}` }],
    }));
    for (let i = 0; i < 6; i += 1) {
      await send(i);
      await waitFor(async () => held.length === i + 1, `message ${i} received while ${i} batches run`);
    }
    expect(records).toBe(6);
    // A seventh waits in the queue until a record is done, and then comes in a batch of its own.
    await send(6);
    await waitFor(async () => (await counts(queueUrl)).visible === 1, 'the seventh message waiting');
    expect(held.length).toBe(6);
    held.shift()!();
    await waitFor(async () => held.length === 6 && handled === 1, 'the seventh message received after a record is done');
    expect(records).toBe(6);
    while (held.length > 0) held.shift()!();
    await waitFor(async () => handled === 7, 'every record handled');
    await poller.stop();
    expect(await counts(queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });
});

describe('workerExecArgv (the consumer thread\'s execArgv)', () => {
  it('keeps the module loaders with their values and the profilers, and drops V8 and process options a Worker refuses', () => {
    expect(workerExecArgv(['--max-semi-space-size=64', '--import', 'tsx', '--cpu-prof', '--cpu-prof-dir=/tmp/p', '--require', './pre.cjs', '--conditions=dev', '--title', 'x', '-r', 'y']))
      .toEqual(['--import', 'tsx', '--cpu-prof', '--cpu-prof-dir=/tmp/p', '--require', './pre.cjs', '--conditions=dev', '-r', 'y']);
    expect(workerExecArgv(['--import=file:///tsx/loader.mjs'])).toEqual(['--import=file:///tsx/loader.mjs']);
  });

  it('starts a worker with what it keeps of a command line holding a V8 option', async () => {
    const { Worker } = await import('node:worker_threads');
    const worker = new Worker('require("node:worker_threads").parentPort.postMessage("up")', {
      eval: true, execArgv: workerExecArgv(['--max-semi-space-size=64', '--stack-size=2000', '--title=t']),
    });
    const message = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(message).toBe('up');
  });
});
