/**
 * Eager dispatch: the creating code sends its outbox row right after commit, so a new job's message is on
 * its queue before any scheduled dispatcher runs; when that fails, the scheduled run still sends it within
 * about a minute. Jobs are created through the real createJob.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { createJob, type CreateJobDeps, type CreateJobInput } from '../../lib/jobs/create-job.ts';
import { defineJob } from '../../lib/jobs/definition.ts';
import { createRegistry } from '../../lib/jobs/registry.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';
import { dispatchOutboxEventById, runScheduledDispatch, type EagerDispatchResult } from '../../lib/outbox/dispatcher.ts';
import type { DispatcherDeps } from '../../lib/outbox/dispatcher-deps.ts';
import { parseJobMessage } from '../../lib/queue/job-message.ts';
import { freePort, silentEndpoint } from '../helpers/ports.ts';
import { createTestQueues, drainQueue, movableClock, outboxRows, testDispatcherDeps, testSqsClient } from '../helpers/outbox-factories.ts';

/** A background job type that orders each user's jobs (message group = user id). */
const perUserJob = defineJob({
  ...syntheticJob,
  jobType: 'per_user_digest',
  queue: { queueName: 'background', defaultPriority: 70, messageGroup: 'user' },
});
const registry = createRegistry([syntheticJob, perUserJob]);

function request(overrides: Partial<CreateJobInput> = {}): CreateJobInput {
  return {
    userId: 'user-7', jobType: 'synthetic_job', triggerType: 'user', targetType: 'lesson', targetId: 'lesson-1',
    input: { prompt: 'Explain photosynthesis' }, ...overrides,
  };
}

/**
 * The two ways createJob dispatches eagerly: its default, a row born claimed for its own dispatch
 * (`dispatcher`), and a caller-given function that claims the `pending` row by id.
 */
const VARIANTS = {
  'born claimed (the default)': (deps: DispatcherDeps): CreateJobDeps => ({ registry, dispatcher: deps }),
  'claimed by id (a caller-given function)': (deps: DispatcherDeps): CreateJobDeps => ({ registry, eagerDispatch: (id) => dispatchOutboxEventById(id, deps) }),
};

/** createJob with eager dispatch through `deps`; what eager dispatch did, read from its metrics. */
async function createWithEagerDispatch(deps: DispatcherDeps & { metrics: ReturnType<typeof testDispatcherDeps>['metrics'] }, req: CreateJobInput) {
  const count = () => ({ published: deps.metrics.total('EagerDispatchPublished'), skipped: deps.metrics.total('EagerDispatchSkipped'), failed: deps.metrics.total('EagerDispatchFailed') });
  const before = count();
  const { job } = await createJob(req, variant(deps));
  const after = count();
  const result = (Object.keys(after) as EagerDispatchResult[]).find((k) => after[k] > before[k]);
  return { job, result };
}

let variant: (deps: DispatcherDeps) => CreateJobDeps;

describe.each(Object.entries(VARIANTS))('eager dispatch, %s', (_name, make) => {
  beforeEach(() => {
    variant = make;
  });

  it("puts a created job's message on its queue before the scheduled dispatcher runs at all", async () => {
    const { queueUrls } = await createTestQueues();
    const deps = testDispatcherDeps({ queueUrls });

    const { job, result } = await createWithEagerDispatch(deps, request());

    expect(result).toBe('published');
    const [message, ...others] = await drainQueue(testSqsClient(), queueUrls.interactive);
    expect(others).toHaveLength(0);
    const [row] = await outboxRows();
    expect(parseJobMessage(message?.Body ?? '')).toEqual({
      jobId: job.id, jobType: 'synthetic_job', idempotencyKey: `ai.job.enqueue:${job.id}`, createdAt: job.createdAt.toISOString(),
    });
    expect(message?.Attributes?.MessageDeduplicationId).toBe(row?.dedupeKey);
    expect(row).toMatchObject({ status: 'published', attemptCount: 0 });
    expect(deps.metrics.total('EagerDispatchPublished')).toBe(1);
  });

  it("uses the definition's queue and per-user message group", async () => {
    const { queueUrls } = await createTestQueues();
    const deps = testDispatcherDeps({ queueUrls });

    const { job, result } = await createWithEagerDispatch(deps, request({ jobType: 'per_user_digest' }));

    expect(result).toBe('published');
    expect(await drainQueue(testSqsClient(), queueUrls.interactive)).toHaveLength(0);
    const [message] = await drainQueue(testSqsClient(), queueUrls.background);
    expect(parseJobMessage(message?.Body ?? '').jobId).toBe(job.id);
    expect(message?.Attributes?.MessageGroupId).toBe('user-7');
  });

  it('skips a row that is already claimed or sent', async () => {
    const { queueUrls } = await createTestQueues();
    const deps = testDispatcherDeps({ queueUrls });
    await createWithEagerDispatch(deps, request());
    const [row] = await outboxRows();

    expect(await dispatchOutboxEventById(row!.id, deps)).toBe('skipped');
    expect(await drainQueue(testSqsClient(), queueUrls.interactive)).toHaveLength(1);
  });

  it('never fails the create when sending fails; the scheduled run sends the row within a minute', async () => {
    const { queueUrls } = await createTestQueues();
    const clock = movableClock();
    const broken = testDispatcherDeps({ queueUrls, sqs: testSqsClient(`http://127.0.0.1:${await freePort()}`), policy: { now: clock.now } });

    const { job, result } = await createWithEagerDispatch(broken, request());

    expect(result).toBe('failed');
    expect(await getPrisma().aiJob.findUnique({ where: { id: job.id } })).toMatchObject({ lifecycleStatus: 'queued' });
    expect((await outboxRows())[0]).toMatchObject({ status: 'pending', attemptCount: 1 });

    clock.advance(60_000); // the next scheduled run, at most a minute later
    const scheduled = testDispatcherDeps({ queueUrls, policy: { now: clock.now } });
    expect(await runScheduledDispatch(scheduled, { remainingTimeMs: () => 50_000 })).toMatchObject({ published: 1 });
    const [message] = await drainQueue(testSqsClient(), queueUrls.interactive);
    expect(parseJobMessage(message?.Body ?? '').jobId).toBe(job.id);
  });

  it('gives up on a queue endpoint that never answers after its budget: the create returns, the row is retried later', async () => {
    const { queueUrls } = await createTestQueues();
    const hung = await silentEndpoint();
    try {
      const clock = movableClock();
      const stuck = testDispatcherDeps({ queueUrls, sqs: testSqsClient(hung.url), policy: { now: clock.now, eagerTimeoutMs: 300 } });

      // Without the budget this never returns (the SDK has no request timeout): the test would time out.
      const { job, result } = await createWithEagerDispatch(stuck, request());

      expect(result).toBe('failed');
      const [row] = await outboxRows();
      expect(row).toMatchObject({ status: 'pending', attemptCount: 1, lockedBy: null });
      expect(row?.lastError).toMatch(/abort|budget/i);
      expect(stuck.logger.records.some((r) => r.level === 'warn' && /ran out of time/.test(r.message))).toBe(true);
      expect(stuck.metrics.total('EagerDispatchFailed')).toBe(1);

      clock.advance(60_000);
      const scheduled = testDispatcherDeps({ queueUrls, policy: { now: clock.now } });
      expect(await runScheduledDispatch(scheduled, { remainingTimeMs: () => 50_000 })).toMatchObject({ published: 1 });
      const [message] = await drainQueue(testSqsClient(), queueUrls.interactive);
      expect(parseJobMessage(message?.Body ?? '').jobId).toBe(job.id);
    } finally {
      await hung.close();
    }
  });

  it('returns failed instead of throwing when it cannot even start (no configuration)', async () => {
    // No deps and no INTERACTIVE_QUEUE_URL in this worker's environment: the defaults cannot be built.
    expect(process.env.INTERACTIVE_QUEUE_URL).toBeUndefined();
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT'; // the fallback logger's error line is expected here
    try {
      await expect(dispatchOutboxEventById('01J00000000000000000000000')).resolves.toBe('failed');
    } finally {
      delete process.env.POWERTOOLS_LOG_LEVEL;
    }
  });
});

describe('a row born claimed', () => {
  it('is claimed in the creating transaction itself: lockedAt is the creation time, and it is published', async () => {
    const { queueUrls } = await createTestQueues();
    const deps = testDispatcherDeps({ queueUrls });
    const { job } = await createJob(request(), { registry, dispatcher: deps });
    const [row] = await outboxRows();
    expect(row).toMatchObject({ status: 'published', lockedAt: job.createdAt });
    expect(row?.lockedBy).toMatch(new RegExp(`^${deps.instanceId.slice(0, 100)}:[0-9A-Z]{26}$`));
    expect(await drainQueue(testSqsClient(), queueUrls.interactive)).toHaveLength(1);
  });

  it('whose creator died before sending is left alone by the scheduled run until its lease ends, then sent once', async () => {
    const { queueUrls } = await createTestQueues();
    const clock = movableClock();
    // A creator that dies between commit and send: its route never answers and ignores the abort, so eager
    // dispatch gives up at its backstop without settling anything — exactly what a crash leaves behind.
    const dying = { ...testDispatcherDeps({ queueUrls, policy: { now: clock.now, eagerTimeoutMs: 200 } }) };
    const never = { send: () => new Promise<never>(() => undefined) };
    const { job } = await createJob(request(), { registry, dispatcher: { ...dying, routes: new Map([['ai.job.enqueue', never]]) } });
    const [row] = await outboxRows();
    expect(row).toMatchObject({ status: 'processing', attemptCount: 0 });
    expect(row!.availableAt.getTime()).toBeGreaterThan(job.createdAt.getTime());

    const scheduled = testDispatcherDeps({ queueUrls, policy: { now: clock.now } });
    expect(await runScheduledDispatch(scheduled, { remainingTimeMs: () => 50_000 })).toMatchObject({ released: 0, published: 0 });
    expect(await drainQueue(testSqsClient(), queueUrls.interactive)).toHaveLength(0);

    clock.advance(row!.availableAt.getTime() - Date.now() + 1);
    expect(await runScheduledDispatch(scheduled, { remainingTimeMs: () => 50_000 })).toMatchObject({ released: 1, published: 1 });
    const messages = await drainQueue(testSqsClient(), queueUrls.interactive);
    expect(messages.map((m) => parseJobMessage(m.Body ?? '').jobId)).toEqual([job.id]);
    expect((await outboxRows())[0]).toMatchObject({ status: 'published', attemptCount: 0 });
  });
});
