/**
 * Eager sends of one process are coalesced (lib/outbox/eager-batcher.ts): rows created while a send is in
 * flight wait for it and go together; a send that hangs past its budget does not hold up the rows behind it.
 * Jobs are created through the real createJob on the test SQS server; the enqueue route is wrapped only to
 * hold its first send until the test lets it go, and to record what each send carried.
 */
import { describe, expect, it } from 'vitest';
import { createJob, type CreateJobInput } from '../../lib/jobs/create-job.ts';
import { createRegistry } from '../../lib/jobs/registry.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';
import { eagerBatcherOf } from '../../lib/outbox/eager-batcher.ts';
import type { DispatcherDeps } from '../../lib/outbox/dispatcher-deps.ts';
import type { OutboxRoute } from '../../lib/outbox/routes.ts';
import { parseJobMessage } from '../../lib/queue/job-message.ts';
import { createTestQueues, drainQueue, outboxRows, testDispatcherDeps, testSqsClient } from '../helpers/outbox-factories.ts';
import { waitFor } from '../helpers/ports.ts';

const registry = createRegistry([syntheticJob]);

function request(i: number): CreateJobInput {
  return {
    userId: `user-${i}`, jobType: 'synthetic_job', triggerType: 'user', targetType: 'lesson', targetId: 'lesson-1',
    input: { prompt: `Explain photosynthesis ${i}` },
  };
}

/**
 * `deps` with its enqueue route wrapped: every send's row count is recorded, and the first send waits for
 * `open()` (or, with `hangFirst`, never returns and ignores its abort, as a stuck connection would).
 */
function gatedEnqueue<D extends DispatcherDeps>(deps: D, opts: { hangFirst?: boolean } = {}) {
  const inner = deps.routes.get('ai.job.enqueue')!;
  const sends: number[] = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => { open = resolve; });
  const route: OutboxRoute = {
    ...inner,
    async send(rows, ctx) {
      sends.push(rows.length);
      if (sends.length === 1) {
        if (opts.hangFirst) return new Promise<never>(() => undefined);
        await gate;
      }
      return inner.send(rows, ctx);
    },
  };
  const routes: DispatcherDeps['routes'] = new Map([...deps.routes, ['ai.job.enqueue', route]]);
  return { deps: { ...deps, routes }, sends, open };
}

describe('eager dispatch, coalesced', () => {
  it('sends the rows created while a send is in flight together, in one batch, and publishes every one', async () => {
    const { queueUrls } = await createTestQueues();
    // Budget and wait long enough that no slow machine reaches them while the test holds the first send.
    const { deps, sends, open } = gatedEnqueue(testDispatcherDeps({ queueUrls, policy: { eagerTimeoutMs: 60_000, eagerWaitMs: 60_000 } }));
    const first = createJob(request(0), { registry, dispatcher: deps });
    await waitFor(async () => sends.length === 1, 'the first send started');
    const rest = Array.from({ length: 5 }, (_, i) => createJob(request(i + 1), { registry, dispatcher: deps }));
    await waitFor(async () => eagerBatcherOf(deps).waitingCount === 5, 'five rows waiting behind the first send');
    open();
    const jobs = (await Promise.all([first, ...rest])).map((r) => r.job.id);

    expect(sends).toEqual([1, 5]);
    const rows = await outboxRows();
    expect(rows.map((r) => r.status)).toEqual(Array(6).fill('published'));
    expect(new Set(rows.map((r) => r.lockedBy)).size).toBe(1); // the process's eager holder
    const sent = (await drainQueue(testSqsClient(), queueUrls.interactive)).map((m) => parseJobMessage(m.Body ?? '').jobId);
    expect(sent.sort()).toEqual([...jobs].sort());
    expect(deps.metrics.total('EagerDispatchPublished')).toBe(6);
  });

  it('does not hold up the rows behind a send that hangs: past the wait they go on their own, the stuck row is left to the scheduled run', async () => {
    const { queueUrls } = await createTestQueues();
    const { deps, sends } = gatedEnqueue(testDispatcherDeps({ queueUrls, policy: { eagerTimeoutMs: 2_000 } }), { hangFirst: true });
    const stuck = createJob(request(0), { registry, dispatcher: deps });
    await waitFor(async () => eagerBatcherOf(deps).sendingForMs > deps.policy.eagerWaitMs, 'the first send in flight for longer than the wait');

    const { job } = await createJob(request(1), { registry, dispatcher: deps }); // at once, with its whole budget
    expect(sends).toEqual([1, 1]);
    const sent = (await drainQueue(testSqsClient(), queueUrls.interactive)).map((m) => parseJobMessage(m.Body ?? '').jobId);
    expect(sent).toEqual([job.id]);
    const { job: stuckJob } = await stuck; // returns at its backstop; nothing settled its row
    const byAggregate = new Map((await outboxRows()).map((r) => [r.aggregateId, r]));
    expect(byAggregate.get(job.id)).toMatchObject({ status: 'published' });
    expect(byAggregate.get(stuckJob.id)).toMatchObject({ status: 'processing', attemptCount: 0 });
    expect(deps.metrics.total('EagerDispatchPublished')).toBe(1);
    expect(deps.metrics.total('EagerDispatchFailed')).toBe(1);
  });

  it('lets a row wait behind a send only until the send ends: a send that hangs past its budget frees the rows behind it', async () => {
    const { queueUrls } = await createTestQueues();
    // No wait limit here: the budget alone must free the row behind the stuck send.
    const { deps, sends } = gatedEnqueue(testDispatcherDeps({ queueUrls, policy: { eagerTimeoutMs: 1_000, eagerWaitMs: 60_000 } }), { hangFirst: true });
    const stuck = createJob(request(0), { registry, dispatcher: deps });
    await waitFor(async () => sends.length === 1, 'the first send started');
    const behind = createJob(request(1), { registry, dispatcher: deps }).then(({ job }) => job);
    await waitFor(async () => eagerBatcherOf(deps).waitingCount === 1 || sends.length === 2, 'a row waiting behind the stuck send');

    const { job: stuckJob } = await stuck; // at its backstop
    const job = await behind;
    expect(sends).toEqual([1, 1]); // its send started when the stuck one's budget ran out
    const byAggregate = new Map((await outboxRows()).map((r) => [r.aggregateId, r]));
    expect(byAggregate.get(stuckJob.id)).toMatchObject({ status: 'processing', attemptCount: 0 });
    // Settled either way: sent in what was left of its budget, or back to `pending` as a failed attempt.
    const row = byAggregate.get(job.id);
    expect(row?.status === 'published' || (row?.status === 'pending' && row.attemptCount === 1)).toBe(true);
    expect(eagerBatcherOf(deps).waitingCount).toBe(0);
  });
});
