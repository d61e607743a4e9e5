/**
 * The platform failing is not the job failing: a database connection lost mid-attempt gives the attempt back
 * (a bounded number of times); an error escaping a delivery is logged and the message is visible again after
 * a short backoff, not the queue's visibility timeout; a hung delivery is bounded by the invocation's deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createPrismaClient, getPrisma, type AiJob } from '../../lib/db/client.ts';
import { getSqlPool } from '../../lib/db/sql-pool.ts';
import { consumeBatch } from '../../lib/engine/consumer.ts';
import type { EngineCheckpoints } from '../../lib/engine/engine-deps.ts';
import { MAX_INFRASTRUCTURE_REFUNDS } from '../../lib/engine/settle.ts';
import { freePort } from '../../lib/dev/ports.ts';
import { startEngineHarness, toSqsEvent, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

class RecordingLogger extends Logger {
  readonly errors: { message: string; extra: unknown[] }[] = [];
  override error(message: string, ...extra: unknown[]): void {
    this.errors.push({ message, extra });
  }
}

const db = getPrisma();
const checkpoints: EngineCheckpoints = {};
const logger = new RecordingLogger({ serviceName: 'infra-test', logLevel: 'ERROR' });
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ registry: testRegistry(), engine: { checkpoints, logger } });
});
afterAll(async () => h.close());

/** A real driver error: a connection the server killed, used once more. */
async function killedConnectionError(): Promise<unknown> {
  const conn = await getSqlPool().getConnection();
  await getSqlPool().query(`KILL ${Number(conn.threadId)}`);
  const err = await conn.query('SELECT 1').then(() => undefined, (e: unknown) => e);
  await conn.release().catch(() => undefined);
  if (!err) throw new Error('the killed connection still answered');
  return err;
}

function failTimes(jobId: string, times: number): void {
  let left = times;
  checkpoints.afterProviderAnswer = async (j: AiJob) => {
    if (j.id !== jobId || left <= 0) return;
    left -= 1;
    throw await killedConnectionError();
  };
}

/** Receives `queueUrl` until a message arrives or `ms` pass; the time it took. */
async function timeUntilVisible(queueUrl: string, ms: number) {
  const started = Date.now();
  while (Date.now() - started < ms) {
    const { Messages = [] } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'] }));
    if (Messages.length > 0) return { elapsedMs: Date.now() - started, messages: Messages };
  }
  return { elapsedMs: Infinity, messages: [] };
}

describe('a database connection lost mid-attempt', () => {
  it('does not use up the attempt: a single-attempt job still succeeds', async () => {
    const created = await h.create({ jobType: 'single_attempt_job', input: { prompt: 'db blip' } });
    failTimes(created.id, 1);
    try {
      const first = await h.deliver();
      expect(first.response.batchItemFailures).toHaveLength(1);
      expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
        lifecycleStatus: 'running', lockedBy: null, attemptCount: 0, errorCode: 'INFRASTRUCTURE',
      });
      const done = await h.runUntilTerminal(created.id);
      expect(done).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1 });
    } finally {
      delete checkpoints.afterProviderAnswer;
    }
  });

  it(`gives attempts back at most ${MAX_INFRASTRUCTURE_REFUNDS} times, then counts them: the job ends failed`, async () => {
    const created = await h.create({ jobType: 'single_attempt_job', input: { prompt: 'db down for good' } });
    failTimes(created.id, 100);
    try {
      const done = await h.runUntilTerminal(created.id, 'interactive', 40_000);
      expect(done).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'INFRASTRUCTURE', attemptCount: 1 });
      const infra = await db.aiJobTransition.count({ where: { jobId: created.id, errorCode: 'INFRASTRUCTURE' } });
      expect(infra).toBe(MAX_INFRASTRUCTURE_REFUNDS + 1);
    } finally {
      delete checkpoints.afterProviderAnswer;
    }
  }, 60_000);
});

describe('an error escaping a delivery', () => {
  it('is logged and the message is visible again within seconds, not the 30 s visibility timeout', async () => {
    const created = await h.create({ input: { prompt: 'settle on a dead database' } });
    // The engine's database is unreachable: loading the snapshot fails, and so does settling the failure.
    const deadDb = createPrismaClient(`mysql://root@127.0.0.1:${await freePort()}/nothing?poolTimeoutMs=1000`);
    const engine = { ...h.engine, db: deadDb };
    const queueUrl = h.queues.interactive.queueUrl;
    const { Messages = [] } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 2, MessageSystemAttributeNames: ['All'] }));
    expect(Messages).toHaveLength(1);
    const response = await consumeBatch(toSqsEvent(Messages, h.queues.interactive.queueArn), { queueUrl, sqs: h.sqs, engine });
    expect(response.batchItemFailures).toHaveLength(1);
    expect(logger.errors.map((e) => e.message)).toContain('delivery failed on infrastructure; the message is visible again after a short backoff');
    const again = await timeUntilVisible(queueUrl, 20_000);
    expect(again.messages.map((m) => JSON.parse(m.Body!).jobId)).toEqual([created.id]);
    expect(again.elapsedMs).toBeLessThan(15_000);
    await deadDb.$disconnect();
  }, 40_000);

  /**
   * A job whose attempt hangs after validation, its message consumed by `consume`; asserts the delivery is
   * reported failed and its message visible again, then lets the hung call go.
   */
  async function hungDelivery(prompt: string, consume: (event: SQSEvent, queueUrl: string) => Promise<SQSBatchResponse>) {
    const created = await h.create({ input: { prompt } });
    let release!: () => void;
    const hung = new Promise<void>((r) => (release = r));
    checkpoints.afterValidation = async (j) => (j.id === created.id ? hung : undefined);
    const queueUrl = h.queues.interactive.queueUrl;
    try {
      const { Messages = [] } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 2, MessageSystemAttributeNames: ['All'] }));
      const response = await consume(toSqsEvent(Messages, h.queues.interactive.queueArn), queueUrl);
      expect(response.batchItemFailures).toHaveLength(1);
      const again = await timeUntilVisible(queueUrl, 20_000);
      expect(again.messages.map((m) => JSON.parse(m.Body!).jobId)).toEqual([created.id]);
    } finally {
      delete checkpoints.afterValidation;
      release();
    }
  }

  // What the consumer does after abandoning a delivery (it waits for the run): test/engine/delivery-guard.test.ts.
  it("a delivery is also bounded by the invocation's deadline (Lambda's timeout below the job's)", async () => {
    // The job's bound is 30 s + the default 60 s margin; the invocation has 7 s left: abandoned after 1 s (its
    // floor; the deadline less the 5 s reserve and the 15 s for the run to stop is below it), given up ~1 s later.
    await hungDelivery('hang past the deadline', async (event, queueUrl) => {
      const deadline = Date.now() + 7_000;
      const context = { getRemainingTimeInMillis: () => deadline - Date.now() } as Context;
      const response = await consumeBatch(event, { queueUrl, sqs: h.sqs, engine: h.engine }, context);
      expect(Date.now()).toBeLessThan(deadline);
      return response;
    });
  }, 40_000);
});
