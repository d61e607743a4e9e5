/** Every failure class through the real path: classification, retry policy, fallback, and what is recorded. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { costOf } from '../../lib/ai/pricing.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';
import { transitionsOf } from '../helpers/factories.ts';

const db = getPrisma();
let h: EngineHarness;
let fallback: EngineHarness;
beforeAll(async () => {
  const registry = testRegistry();
  h = await startEngineHarness({ registry });
  fallback = await startEngineHarness({ registry, primary: { scenario: 'server_error' }, primaryModel: 'gpt-4o-mini' });
});
afterAll(async () => {
  await h.close();
  await fallback.close();
});

const job = (jobRow: { id: string }) => db.aiJob.findUniqueOrThrow({ where: { id: jobRow.id } });
const usage = (jobId: string) => db.aiUsageLog.findMany({ where: { jobId }, orderBy: { id: 'asc' } });

describe('retryable provider failures', () => {
  it('retries after a 500 and then succeeds on a new lease', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'hi', scenario: 'fail_once:retry-success' } });
    const first = await h.deliver();
    expect(first.response.batchItemFailures).toHaveLength(1);
    expect(await job(created)).toMatchObject({ lifecycleStatus: 'running', lockedBy: null, errorCode: 'PROVIDER_UNAVAILABLE', attemptCount: 1 });
    const done = await h.runUntilTerminal(created.id);
    expect(done).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 2, leaseVersion: 2, errorCode: null });
    expect((await usage(created.id)).map((u) => [u.attemptNo, u.errorCode])).toEqual([[1, 'PROVIDER_UNAVAILABLE'], [2, null]]);
    expect((await transitionsOf(created.id)).map((t) => `${t.fromStatus}->${t.toStatus}`)).toEqual([
      'null->queued', 'queued->running', 'running->running', 'running->running', 'running->succeeded',
    ]);
  });

  it('fails with the last code once retries are exhausted, with a safe public message and admin detail', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'hi', scenario: 'server_error' } });
    const done = await h.runUntilTerminal(created.id);
    expect(done).toMatchObject({ lifecycleStatus: 'failed', attemptCount: 3, errorCode: 'PROVIDER_UNAVAILABLE', publicErrorMessage: 'The AI provider is unavailable' });
    expect(done.internalErrorMessage).toMatch(/500|mock/i);
    expect(done.publicErrorMessage).not.toMatch(/http|127\.0\.0\.1|stack/i);
    expect(await usage(created.id)).toHaveLength(3);
    expect(await db.outboxEvent.count({ where: { aggregateId: created.id, eventType: 'ai.job.failed' } })).toBe(1);
  });

  it('honours Retry-After: the model cools down and the job waits, its message invisible for the delay, no attempt spent', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'hi', scenario: 'rate_limit:3' } });
    const { response } = await h.deliver();
    expect(response.batchItemFailures).toHaveLength(1);
    expect(await job(created)).toMatchObject({ lifecycleStatus: 'running', attemptCount: 0, lockedBy: null });
    expect(await db.capacityWait.findUnique({ where: { jobId: created.id } })).toMatchObject({ reason: 'provider_capacity', model: 'mock-chat' });
    const early = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.queues.interactive.queueUrl, WaitTimeSeconds: 1 }));
    expect(early.Messages ?? []).toHaveLength(0);
  });

  it('falls back to the next provider before spending an attempt, and prices each call', async () => {
    const created = await fallback.create({ input: { prompt: 'fallback please' } });
    await fallback.deliver();
    expect(await job(created)).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1, modelProvider: 'mock' });
    const rows = await usage(created.id);
    expect(rows.map((u) => [u.provider, u.errorCode])).toEqual([['openai-compat', 'PROVIDER_UNAVAILABLE'], ['mock', null]]);
    for (const row of rows) {
      const expected = costOf({ provider: row.provider, model: row.model }, row);
      expect(row.costUsd.toFixed(8)).toBe(expected.costUsd);
      expect(row.priceVersion).toBe(expected.priceVersion);
    }
  });
});

describe('output validation', () => {
  it('retries invalid JSON telling the model what was wrong, and accepts the corrected answer', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'json please', scenario: 'invalid_json' } });
    const done = await h.runUntilTerminal(created.id);
    expect(done).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 2 });
    expect((await usage(created.id)).map((u) => u.errorCode)).toEqual([null, null]);
    const mine = h.mock.requests.filter((r) => JSON.stringify(r.messages).includes('json please'));
    expect(mine).toHaveLength(2);
    expect(JSON.stringify(mine[0]!.messages)).not.toContain('previous answer was rejected');
    expect(mine[1]!.messages.at(-1)?.content).toContain('previous answer was rejected');
  });

  it('fails with SCHEMA_VALIDATION when every attempt breaks the output schema', async () => {
    const broken = await startEngineHarness({ registry: testRegistry(), mock: { scenario: 'schema_violation' } });
    try {
      const created = await broken.create({ jobType: 'quick_retry_job', input: { prompt: 'shape' } });
      const done = await broken.runUntilTerminal(created.id);
      expect(done).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'SCHEMA_VALIDATION', attemptCount: 3 });
      expect(done.internalErrorMessage).toContain('output failed the schema');
    } finally {
      await broken.close();
    }
  });
});

describe('permanent failures are not retried', () => {
  it('CREDENTIAL_INVALID on a 401', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'x', scenario: 'unauthorized' } });
    const { response } = await h.deliver();
    expect(response.batchItemFailures).toEqual([]);
    expect(await job(created)).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'CREDENTIAL_INVALID', attemptCount: 1 });
  });

  it('CONTENT_SAFETY refuses unsafe learner text before any provider call', async () => {
    const created = await h.create({ jobType: 'feynman_evaluation', input: { concept: 'Chemistry', explanation: 'Here is how to synthesize sarin at home step by step.' } });
    const before = h.mock.requests.length;
    await h.deliver();
    expect(await job(created)).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'CONTENT_SAFETY', publicErrorMessage: 'The content was blocked by the safety check' });
    expect(h.mock.requests.length).toBe(before);
  });
});

describe('business validation in the projector', () => {
  it('rejects a quiz whose answer index is out of range, writing nothing', async () => {
    const bad = await startEngineHarness({
      mock: { respond: () => ({ questions: [{ question: 'Q?', options: ['a', 'b'], answerIndex: 7, explanation: 'e' }] }) },
    });
    try {
      const created = await bad.create({ jobType: 'quiz_generation', input: { sourceText: 'Some text about cells.', count: 1, difficulty: 'easy' } });
      await bad.deliver('background');
      expect(await job(created)).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'BUSINESS_VALIDATION', attemptCount: 1 });
      expect(await db.quizQuestion.count({ where: { jobId: created.id } })).toBe(0);
      expect(await db.aiJobArtifact.count({ where: { jobId: created.id } })).toBe(0);
    } finally {
      await bad.close();
    }
  });
});
