/**
 * Shared provider capacity through the whole engine, on the real database and the SQS-API server: a 429's
 * cooldown is honoured by every consumer, the router takes the next model meanwhile, a job that no route can
 * take waits through its message's visibility without spending an attempt — at most CAPACITY_WAIT_RECEIVES times
 * per message, then on a new message — so nothing dead-letters for waiting.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { runAtomically } from '../../lib/db/sql-pool.ts';
import { costOf } from '../../lib/ai/pricing.ts';
import { SqlCapacityGate } from '../../lib/capacity/gate.ts';
import { ProviderLimitsConfig } from '../../lib/capacity/limits-config.ts';
import { reserve } from '../../lib/capacity/reserve.ts';
import { settlementStatements } from '../../lib/capacity/settle-statements.ts';
import { CAPACITY_WAIT_RECEIVES } from '../../lib/capacity/capacity-wait.ts';
import { DATABASE_CLOCK } from '../../lib/capacity/db-clock.ts';
import { findJobWaits } from '../../lib/capacity/waits-repository.ts';
import { lockJob } from '../../lib/jobs/lifecycle-repository.ts';
import { parkForCapacity } from '../../lib/jobs/lifecycle-wait.ts';
import { DEFAULT_REAPER_OPTIONS, reapOverdueRetries } from '../../lib/engine/reaper.ts';
import { runDispatchCycle } from '../../lib/outbox/dispatcher.ts';
import { harnessesClosedAfterAll, type EngineHarness } from '../helpers/engine-harness.ts';
import { holdRequest, NO_CAPS } from '../helpers/capacity.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

const db = getPrisma();
const job = (id: string) => db.aiJob.findUniqueOrThrow({ where: { id } });
const start = harnessesClosedAfterAll();

async function deadLetters(h: EngineHarness): Promise<number> {
  const url = h.queues.interactive.queueUrl.replace('-interactive.fifo', '-interactive-dlq.fifo');
  const { Attributes = {} } = await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }));
  return Number(Attributes.ApproximateNumberOfMessages ?? 0) + Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0);
}

describe('a 429 with Retry-After: 20', () => {
  let h: EngineHarness;
  beforeAll(async () => {
    h = await start();
  });
  afterEach(() => {
    h.mock.requests.length = 0;
  });

  it('cools the model down for every consumer: no call to it, nothing dead-lettered, no attempt spent', async () => {
    const first = await h.create({ input: { prompt: 'first [scenario:rate_limit:20]' } });
    const startedAt = Date.now();
    expect((await h.deliver()).response.batchItemFailures).toHaveLength(1);
    expect(h.mock.requests).toHaveLength(1);
    const limit = await db.providerLimit.findUniqueOrThrow({ where: { provider_model: { provider: 'mock', model: 'mock-chat' } } });
    expect(limit.cooldownUntil!.getTime()).toBeGreaterThanOrEqual(startedAt + 19_000);
    expect(limit.rateFactor).toBe(500);

    const others = [await h.create({ input: { prompt: 'second' } }), await h.create({ input: { prompt: 'third' } })];
    const { messages } = await h.deliver();
    expect(messages).toHaveLength(2);
    expect(h.mock.requests).toHaveLength(1); // nobody called the cooled-down model
    for (const created of [first, ...others]) {
      expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'running', lockedBy: null, attemptCount: 0 });
      const wait = await db.capacityWait.findUniqueOrThrow({ where: { jobId: created.id } });
      expect(wait).toMatchObject({ reason: 'provider_capacity', provider: 'mock', model: 'mock-chat' });
      expect(wait.dueAt.getTime()).toBeGreaterThanOrEqual(limit.cooldownUntil!.getTime());
    }
    const waits = await findJobWaits([first.id, ...others.map((o) => o.id)]);
    expect([...waits.values()].map((w) => w.waitingFor)).toEqual(['provider_capacity', 'provider_capacity', 'provider_capacity']);
    expect(waits.get(first.id)!.until.getTime()).toBeGreaterThanOrEqual(limit.cooldownUntil!.getTime());
    const visible = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, WaitTimeSeconds: 1, MaxNumberOfMessages: 10 }));
    expect(visible.Messages ?? []).toHaveLength(0); // every message waits out the cooldown
    expect(await deadLetters(h)).toBe(0);
    expect(await db.aiUsageLog.count()).toBe(1);
  });
});

describe('during a cooldown', () => {
  it('the router takes the next model of the route, and nobody calls the cooled-down one', async () => {
    const h = await start({ primary: { scenario: 'rate_limit:20' }, primaryModel: 'gpt-4o-mini' });
    const first = await h.create({ input: { prompt: 'fallback' } });
    await h.deliver();
    expect(await job(first.id)).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1, modelProvider: 'mock' });
    expect((await db.aiUsageLog.findMany({ where: { jobId: first.id }, orderBy: { createdAt: 'asc' } })).map((u) => [u.provider, u.errorCode]))
      .toEqual([['openai-compat', 'PROVIDER_RATE_LIMITED'], ['mock', null]]);
    h.primary!.setScenario(undefined); // it would answer now; the cooldown still keeps everyone away
    const second = await h.create({ input: { prompt: 'second' } });
    await h.deliver();
    expect(await job(second.id)).toMatchObject({ lifecycleStatus: 'succeeded', modelProvider: 'mock' });
    expect(h.primary!.requests).toHaveLength(1);
  });
});

describe('waiting never dead-letters', () => {
  it(`waits through the message's visibility at most ${CAPACITY_WAIT_RECEIVES} times, then on a new message; runs once capacity is back`, { timeout: 60_000 }, async () => {
    const limits = new ProviderLimitsConfig({ 'mock/*': { rpm: 1_000, tpm: 1_000_000, maxInFlight: 1, maxOutputTokens: 100 } });
    const h = await start({ maxReceiveCount: CAPACITY_WAIT_RECEIVES + 2, capacity: new SqlCapacityGate({ limits, caps: NO_CAPS, price: costOf }) });
    const blocker = holdRequest({ clock: DATABASE_CLOCK, capacity: { limits: limits.limitsFor({ provider: 'mock', model: 'x' })!, tokens: 10 } });
    expect((await reserve(blocker)).kind).toBe('held'); // another consumer's call holds the only slot
    const created = await h.create({ input: { prompt: 'patient' } });
    let receives = 0;
    const deadline = Date.now() + 40_000;
    while (!(await db.outboxEvent.findFirst({ where: { aggregateId: created.id, dedupeKey: { contains: ':wait-' } } }))) {
      if (Date.now() > deadline) throw new Error('the job was never handed to a new message');
      receives += (await h.deliver('interactive', 2)).messages.length;
    }
    expect(receives).toBe(CAPACITY_WAIT_RECEIVES + 1); // 4 visibility waits, then the receive that handed it off
    expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'running', attemptCount: 0, lockedBy: null });
    expect(await db.capacityWait.findUniqueOrThrow({ where: { jobId: created.id } })).toMatchObject({ waits: 0, reason: 'provider_capacity' });
    expect(await deadLetters(h)).toBe(0);

    await runAtomically(settlementStatements(blocker.holdKey, { tokens: 0, costUsd: '0.00000000' })); // the slot is free again
    const done = await h.runUntilTerminal(created.id, 'interactive', 20_000);
    expect(done).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1 });
    expect(await deadLetters(h)).toBe(0);
  });
});

describe('the reaper and waiting jobs', () => {
  it('re-enqueues each wait of one attempt once, and never fails a job for an older wait\'s message', async () => {
    const h = await start();
    const created = await h.create({ input: { prompt: 'parked twice' } });
    const parkAndLose = async (holder: string) => {
      const locked = await lockJob(db, created.id, holder);
      await parkForCapacity({
        jobId: created.id, fence: { holder, leaseVersion: locked.leaseVersion }, actor: holder, waitingFor: 'provider_capacity', code: 'PROVIDER_CAPACITY',
        route: { provider: 'mock', model: 'mock-chat' }, tokens: 10, waitMs: 10, waits: 1, handoff: null, clock: DATABASE_CLOCK,
      });
      await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60, WaitTimeSeconds: 1 }));
    };
    const overdue = { ...DEFAULT_REAPER_OPTIONS, overdueRetryMs: 0, now: new Date(Date.now() + 60_000) };
    await parkAndLose('consumer-a');
    expect(await reapOverdueRetries(db, overdue)).toMatchObject({ reenqueued: 1, failed: 0 });
    await runDispatchCycle(h.dispatcher); // that re-enqueue is published (and, say, lost too)
    await parkAndLose('consumer-b'); // the same attempt number waits again
    expect(await reapOverdueRetries(db, { ...overdue, now: new Date(Date.now() + 120_000) })).toMatchObject({ reenqueued: 1, failed: 0 });
    expect((await db.outboxEvent.findMany({ where: { aggregateId: created.id }, orderBy: { createdAt: 'asc' } })).map((e) => e.dedupeKey.split(':').at(-1)))
      .toEqual([created.id, 'attempt-1-lease-1', 'attempt-1-lease-2']);
    expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'running', attemptCount: 0 });
  });
});
