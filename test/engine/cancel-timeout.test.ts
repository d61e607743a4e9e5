/** The attempt's deadline and user cancellation, both of which must abort the in-flight provider call. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { requestCancel } from '../../lib/jobs/cancellation.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

const db = getPrisma();
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ registry: testRegistry() });
});
afterAll(async () => h.close());

const usage = (jobId: string) => db.aiUsageLog.findMany({ where: { jobId }, orderBy: { id: 'asc' } });

async function until(predicate: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('timeout', () => {
  it('aborts a hanging provider call at the definition timeout and fails with TIMEOUT', async () => {
    const disconnects = h.mock.disconnects;
    const created = await h.create({ jobType: 'short_timeout_job', input: { prompt: 'slow', scenario: 'hang' } });
    const { response } = await h.deliver();
    expect(response.batchItemFailures).toEqual([]);
    const done = await db.aiJob.findUniqueOrThrow({ where: { id: created.id } });
    expect(done).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'TIMEOUT', publicErrorMessage: 'The job took too long' });
    expect((await usage(created.id)).map((u) => u.errorCode)).toEqual(['TIMEOUT']);
    await until(async () => h.mock.disconnects > disconnects, 'the provider to see the disconnect');
  });

  it('retries a timeout when the definition says so, then fails once attempts run out', async () => {
    const created = await h.create({ jobType: 'retry_timeout_job', input: { prompt: 'slow again', scenario: 'hang' } });
    const first = await h.deliver();
    expect(first.response.batchItemFailures).toHaveLength(1);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'running', errorCode: 'TIMEOUT', lockedBy: null });
    const done = await h.runUntilTerminal(created.id);
    expect(done).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'TIMEOUT', attemptCount: 2 });
  });
});

describe('cancel', () => {
  it('cancels a queued job at once; its message is then acknowledged without a provider call', async () => {
    const created = await h.create({ input: { prompt: 'never mind' } });
    expect((await requestCancel(db, created.id, { actor: 'api:user-1', ownerId: 'user-1' })).outcome).toBe('cancelled');
    const before = h.mock.requests.length;
    const { response, messages } = await h.deliver();
    expect(messages).toHaveLength(1);
    expect(response.batchItemFailures).toEqual([]);
    expect(h.mock.requests.length).toBe(before);
    expect(await db.outboxEvent.count({ where: { aggregateId: created.id, eventType: 'ai.job.cancelled' } })).toBe(1);
  });

  it('aborts the in-flight call of a running job, ends it cancelled and bills the call', async () => {
    const disconnects = h.mock.disconnects;
    const created = await h.create({ input: { prompt: 'long one', scenario: 'hang' } });
    const delivery = h.deliver();
    await until(async () => h.mock.requests.some((r) => JSON.stringify(r.messages).includes('long one')), 'the provider call to start');
    const cancel = await requestCancel(db, created.id, { actor: 'api:user-1', ownerId: 'user-1' });
    expect(cancel.outcome).toBe('cancel_requested');
    const { response } = await delivery;
    expect(response.batchItemFailures).toEqual([]);
    const done = await db.aiJob.findUniqueOrThrow({ where: { id: created.id } });
    expect(done).toMatchObject({ lifecycleStatus: 'cancelled', errorCode: 'CANCELLED', lockedBy: null });
    expect((await usage(created.id)).map((u) => u.errorCode)).toEqual(['CANCELLED']);
    expect(h.mock.disconnects).toBeGreaterThan(disconnects);
    expect(await db.outboxEvent.count({ where: { aggregateId: created.id, eventType: 'ai.job.cancelled' } })).toBe(1);
  });
});
