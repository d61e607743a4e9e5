/**
 * Spending caps and the reservation's failure modes through the whole engine: a job that cannot reserve under
 * a cap ends (interactive) or waits for the day's reset on a new message (background); a duplicate delivery
 * takes one reservation; the database unreachable while reserving gives the attempt back like any
 * infrastructure failure.
 */
import { describe, expect, it } from 'vitest';
import type { SQSBatchResponse } from 'aws-lambda';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { getSqlPool, type SqlPool } from '../../lib/db/sql-pool.ts';
import { costOf } from '../../lib/ai/pricing.ts';
import type { ModelRoute, TokenUsage } from '../../lib/ai/types.ts';
import { defineJob } from '../../lib/jobs/definition.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';
import { SqlCapacityGate } from '../../lib/capacity/gate.ts';
import { DEFAULT_MODEL_LIMITS, ProviderLimitsConfig } from '../../lib/capacity/limits-config.ts';
import { consumeBatch } from '../../lib/engine/consumer.ts';
import { findJobWaits } from '../../lib/capacity/waits-repository.ts';
import type { EngineCheckpoints } from '../../lib/engine/engine-deps.ts';
import { harnessesClosedAfterAll, toSqsEvent } from '../helpers/engine-harness.ts';
import { NO_CAPS } from '../helpers/capacity.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

const db = getPrisma();
const job = (id: string) => db.aiJob.findUniqueOrThrow({ where: { id } });
const start = harnessesClosedAfterAll();

const limits = new ProviderLimitsConfig(DEFAULT_MODEL_LIMITS);
/** The mock priced as deepseek-chat, so its calls cost money under a cap. */
const pricedMock = (_route: ModelRoute, usage: Pick<TokenUsage, 'promptTokens' | 'completionTokens'>) =>
  costOf({ provider: 'deepseek', model: 'deepseek-chat' }, usage);
const backgroundJob = defineJob({ ...syntheticJob, jobType: 'background_synthetic_job', queue: { ...syntheticJob.queue, queueName: 'background' } });

describe('a spending cap at execution', () => {
  it('an interactive job that cannot reserve its maximum cost ends SPEND_LIMIT_REACHED at once, without calling the provider', async () => {
    const gate = new SqlCapacityGate({ limits, caps: { ...NO_CAPS, user_day: '0.0001' }, price: pricedMock });
    const h = await start({ capacity: gate });
    const created = await h.create({ input: { prompt: 'too dear' } });
    await h.deliver();
    expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'SPEND_LIMIT_REACHED' });
    expect(h.mock.requests).toHaveLength(0);
  });

  it("a background job waits for the day's reset: handed to a new message due at midnight UTC, no attempt spent", async () => {
    const gate = new SqlCapacityGate({ limits, caps: { ...NO_CAPS, platform_day: '0.0001' }, price: pricedMock });
    const h = await start({ capacity: gate, registry: testRegistry(backgroundJob) });
    const created = await h.create({ jobType: 'background_synthetic_job', input: { prompt: 'tomorrow then' } });
    const { response, messages } = await h.deliver('background');
    expect(messages).toHaveLength(1);
    expect(response.batchItemFailures).toEqual([]); // acknowledged: the job lives on in a new message
    expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'running', attemptCount: 0, lockedBy: null });
    expect((await findJobWaits([created.id])).get(created.id)).toMatchObject({ waitingFor: 'spend_cap', route: null });
    const resume = await db.outboxEvent.findFirstOrThrow({ where: { aggregateId: created.id, dedupeKey: { contains: ':wait-' } } });
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    expect(Math.abs(resume.availableAt.getTime() - midnight.getTime())).toBeLessThan(5_000);
    expect(h.mock.requests).toHaveLength(0);
  });
});

describe('reservations and deliveries', () => {
  it('a duplicate delivery of a message takes one reservation and makes one call', async () => {
    const checkpoints: EngineCheckpoints = {};
    const h = await start({ engine: { checkpoints } });
    const created = await h.create({ input: { prompt: 'once' } });
    let holdsDuringCall = -1;
    checkpoints.afterProviderAnswer = async (j) => {
      if (j.id === created.id) holdsDuringCall = await db.capacityHold.count({ where: { jobId: created.id } });
    };
    const { Messages = [] } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, WaitTimeSeconds: 2, MessageSystemAttributeNames: ['All'] }));
    expect(Messages).toHaveLength(1);
    const event = toSqsEvent(Messages, h.queues.interactive.queueArn);
    const consumer = (instanceId: string) => ({ queueUrl: h.queues.interactive.queueUrl, sqs: h.sqs, engine: { ...h.engine, instanceId } });
    await Promise.all([consumeBatch(event, consumer('consumer-one')), consumeBatch(event, consumer('consumer-two'))]); // the same message, at once
    expect(holdsDuringCall).toBe(1);
    expect(h.mock.requests).toHaveLength(1);
    expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1 });
    expect(await db.capacityHold.count()).toBe(0); // settled with the projection
    expect(await db.providerWindow.findFirstOrThrow()).toMatchObject({ requests: 1 });
  });

  it('the database unreachable while reserving: the message comes back after a short delay, no attempt spent', async () => {
    const dropped = droppingPool();
    const h = await start({ capacity: new SqlCapacityGate({ limits, caps: NO_CAPS, price: costOf, pool: () => dropped }) });
    const created = await h.create({ input: { prompt: 'platform blip' } });
    const { response } = await h.deliver() as { response: SQSBatchResponse };
    expect(response.batchItemFailures).toHaveLength(1);
    expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'running', lockedBy: null, attemptCount: 0, errorCode: 'INFRASTRUCTURE' });
    expect(h.mock.requests).toHaveLength(0);
  });
});

/** A pool whose every connection the server has killed: each use fails as a lost database does. */
function droppingPool(): SqlPool {
  const real = getSqlPool();
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop !== 'getConnection') return Reflect.get(target, prop, receiver);
      return async () => {
        const conn = await target.getConnection();
        await target.query(`KILL ${Number(conn.threadId)}`);
        return conn;
      };
    },
  });
}
