/**
 * A consumer never answers while work of its own delivery is still running (lib/engine/delivery-guard.ts): a
 * delivery that outlives its bound is abandoned (its attempt aborted), and the handler waits for the run to stop
 * before it answers — a run that ignores the first abort for a while, a run stuck in a lock wait another session
 * holds. A run that never stops is given up at the invocation's reserve, and its message comes back only after
 * its lease has expired, so the redelivery takes the job over. The local runtime's stop abandons its deliveries
 * the same way and gives their jobs back. Real MariaDB, the SQS server, the mock AI provider over HTTP; the run's
 * end is what the engine itself logs last (`job delivery finished`).
 */
import mysql from 'mysql2/promise';
import { Logger } from '@aws-lambda-powertools/logger';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';
import { consumeBatch } from '../../lib/engine/consumer.ts';
import type { EngineCheckpoints, EngineDeps } from '../../lib/engine/engine-deps.ts';
import { startConsumers } from '../../lib/dev/local-runtime/consumers.ts';
import { startEngineHarness, toSqsEvent, type EngineHarness } from '../helpers/engine-harness.ts';
import { waitFor } from '../helpers/ports.ts';

/** Every log line of the engine and the guard, with the job it names, in order; the test adds its own marks. */
class TimelineLogger extends Logger {
  readonly timeline: string[] = [];
  override info(message: string, ...extra: unknown[]): void {
    this.record(message, extra);
  }
  override warn(message: string, ...extra: unknown[]): void {
    this.record(message, extra);
  }
  override error(message: string, ...extra: unknown[]): void {
    this.record(message, extra);
  }
  mark(entry: string): void {
    this.timeline.push(entry);
  }
  saw(message: string, jobId: string): boolean {
    return this.timeline.includes(`${message} ${jobId}`);
  }
  private record(message: string, extra: unknown[]): void {
    this.timeline.push(`${message} ${(extra[0] as { jobId?: string } | undefined)?.jobId ?? ''}`);
  }
}

const RUN_FINISHED = 'job delivery finished';
const WAITING = 'delivery abandoned: its attempt is aborted; waiting for the run to stop';
const db = getPrisma();
const logger = new TimelineLogger({ serviceName: 'guard-test', logLevel: 'ERROR' });
const checkpoints: EngineCheckpoints = {};
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ engine: { logger, checkpoints } });
});
afterAll(async () => h.close());

/** The message of `jobId` (just created, so eagerly dispatched). */
async function receive(jobId: string) {
  const queueUrl = h.queues.interactive.queueUrl;
  const { Messages = [] } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 5, MessageSystemAttributeNames: ['All'] }));
  expect(Messages.map((m) => JSON.parse(m.Body!).jobId)).toEqual([jobId]);
  return toSqsEvent(Messages, h.queues.interactive.queueArn);
}

/** An invocation with `ms` left before Lambda's timeout. */
function invocation(ms: number): Context {
  const deadline = Date.now() + ms;
  return { getRemainingTimeInMillis: () => deadline - Date.now() } as Context;
}

/**
 * Hands `jobId`'s message to the consumer with a 1 s bound (the job's 30 s timeout, margin −29 s) and a minute
 * of invocation left, and calls `release` once the guard waits for the abandoned run — or once the handler has
 * answered, which it must not have done by then. The response, and whether the run finished before the answer.
 */
async function deliverAbandoned(engine: EngineDeps, jobId: string, release: () => Promise<void>) {
  const event = await receive(jobId);
  let answered = false;
  const handling = consumeBatch(event, { queueUrl: h.queues.interactive.queueUrl, sqs: h.sqs, engine, deliveryMarginMs: -29_000 }, invocation(60_000))
    .finally(() => {
      answered = true;
      logger.mark(`handler answered ${jobId}`);
    });
  await waitFor(async () => answered || logger.saw(WAITING, jobId), 'the delivery to be abandoned');
  await release();
  const response: SQSBatchResponse = await handling;
  const { timeline } = logger;
  return { response, runEndedFirst: timeline.indexOf(`${RUN_FINISHED} ${jobId}`) >= 0 && timeline.indexOf(`${RUN_FINISHED} ${jobId}`) < timeline.indexOf(`handler answered ${jobId}`) };
}

describe('an abandoned delivery', () => {
  it('waits for a run whose provider call ignores the first abort, and answers with its outcome: the attempt given back, then run again', async () => {
    const created = await h.create({ input: { prompt: 'ignore the first abort' } });
    const letGo = new AbortController();
    let calls = 0;
    // The first call hangs at the mock provider and ignores the attempt's abort until the test lets go of it.
    const engine: EngineDeps = { ...h.engine, generate: (request, opts) => (calls++ > 0 ? h.engine.generate(request, opts)
      : h.engine.generate({ ...request, messages: [...request.messages, { role: 'user', content: '[scenario:hang]' }] }, { ...opts, signal: letGo.signal })) };
    const { response, runEndedFirst } = await deliverAbandoned(engine, created.id, async () => letGo.abort());
    expect(runEndedFirst).toBe(true);
    expect(response.batchItemFailures).toHaveLength(1);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
      lifecycleStatus: 'running', lockedBy: null, attemptCount: 0, errorCode: 'INFRASTRUCTURE',
    });
    expect(await h.runUntilTerminal(created.id)).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1 });
  }, 60_000);

  it('waits for a run stuck in a lock wait another session holds, and answers only once it has committed', async () => {
    const created = await h.create({ input: { prompt: 'stuck behind a lock' } });
    const s = parseDatabaseUrl(process.env.DATABASE_URL ?? '');
    const holder = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password, database: s.database });
    // Validated, about to project: another session takes the job row's lock first.
    checkpoints.afterValidation = async (j) => {
      if (j.id !== created.id) return;
      await holder.query('START TRANSACTION');
      await holder.query('SELECT id FROM AiJob WHERE id = ? FOR UPDATE', [j.id]);
    };
    try {
      const { response, runEndedFirst } = await deliverAbandoned(h.engine, created.id, async () => {
        await waitFor(async () => (await lockWaits(holder)) > 0, 'the run to wait for the row lock');
        await holder.query('COMMIT');
      });
      expect(runEndedFirst).toBe(true);
      expect(response.batchItemFailures).toEqual([]);
      expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1 });
    } finally {
      delete checkpoints.afterValidation;
      await holder.end();
    }
  }, 60_000);

  it('gives a run that never stops up at the invocation\'s reserve; its message comes back after the lease, and the redelivery takes the job over', async () => {
    const created = await h.create({ input: { prompt: 'never stops' } });
    let release!: () => void;
    const hung = new Promise<void>((r) => (release = r));
    let first = true;
    checkpoints.afterValidation = async (j) => {
      if (j.id !== created.id || !first) return;
      first = false;
      await hung;
    };
    // A lease longer than the 5 s backoff: a redelivery within it would find the lease held and be acknowledged.
    const engine: EngineDeps = { ...h.engine, timing: { leaseMs: 8_000, heartbeatMs: 500, cancelPollMs: 100 } };
    try {
      // 9 s left: bound 1 s; then 3 s for the run to stop, less the 5 s reserve.
      const response = await consumeBatch(await receive(created.id), { queueUrl: h.queues.interactive.queueUrl, sqs: h.sqs, engine, deliveryMarginMs: -29_000 }, invocation(9_000));
      expect(response.batchItemFailures).toHaveLength(1);
      expect(logger.saw('the abandoned run did not stop in time; its lease expires and the redelivery takes it over', created.id)).toBe(true);
      expect(await h.runUntilTerminal(created.id, 'interactive', 40_000)).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 2 });
    } finally {
      delete checkpoints.afterValidation;
      release();
    }
  }, 60_000);
});

describe("the local runtime's consumers", () => {
  it('abandon their deliveries when they stop: the running job is given back by the time stop resolves', async () => {
    const local = await startEngineHarness({ engine: { logger } });
    try {
      const created = await local.create({ input: { prompt: 'running at shutdown', scenario: 'hang' } });
      const consumers = startConsumers({ queues: local.queues, engine: local.engine, log: () => undefined });
      await waitFor(async () => local.mock.requests.some((r) => JSON.stringify(r.messages).includes('running at shutdown')), 'the provider call');
      await consumers.stop();
      expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
        lifecycleStatus: 'running', lockedBy: null, attemptCount: 0, errorCode: 'INFRASTRUCTURE',
      });
    } finally {
      await local.close();
    }
  }, 60_000);
});

/** Transactions of this worker's database waiting for a row lock. */
async function lockWaits(conn: mysql.Connection): Promise<number> {
  const [rows] = await conn.query<mysql.RowDataPacket[]>(
    `SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
     WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()`,
  );
  return Number(rows[0]?.n ?? 0);
}
