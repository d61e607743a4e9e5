import { describe, expect, it } from 'vitest';
import { getPrisma, type AiJob } from '../../lib/db/client.ts';
import {
  extendLock, failBeforeAttempt, lockJob, markCancelled, markFailed, markSucceeded, releaseLock,
} from '../../lib/jobs/lifecycle-repository.ts';
import { findExpiredLocks } from '../../lib/jobs/lifecycle-queries.ts';
import {
  JobNotFoundError, LeaseHeldError, LeaseLostError, StaleTransitionError,
} from '../../lib/jobs/lifecycle-errors.ts';
import { EngineError } from '../../lib/errors.ts';
import { JOB_STATES, TRANSITIONS, isAllowed, type JobState, type TransitionName } from '../../lib/jobs/states.ts';
import { TEST_HOLDER, insertJob, minutesAgo, secondsFromNow, transitionsOf } from '../helpers/factories.ts';

const db = getPrisma();
const fence = { holder: TEST_HOLDER, leaseVersion: 1 };
const failure = { actor: 'test', errorCode: 'PROVIDER_UNAVAILABLE', publicMessage: 'The AI provider is unavailable', internalMessage: 'HTTP 503' };

/** One way to attempt each transition function; `expected` is where a legal call lands. */
const attempts: Record<TransitionName, { expected: JobState; run: (job: AiJob) => Promise<AiJob> }> = {
  lockJob: { expected: 'running', run: (j) => lockJob(db, j.id, 'worker-2') },
  releaseLock: { expected: 'running', run: (j) => releaseLock(db, j.id, fence, failure) },
  markSucceeded: { expected: 'succeeded', run: (j) => markSucceeded(db, j.id, fence, { actor: 'test', outputHash: 'b'.repeat(64) }) },
  markFailed: { expected: 'failed', run: (j) => markFailed(db, j.id, fence, failure) },
  markCancelled: {
    expected: 'cancelled',
    run: (j) => markCancelled(db, j.id, { actor: 'test', ...(j.lifecycleStatus === 'queued' ? {} : { fence }) }),
  },
  failBeforeAttempt: { expected: 'failed', run: (j) => failBeforeAttempt(db, j.id, { ...failure, errorCode: 'DISPATCH_FAILED' }) },
};

/** A job in `state` that a legal call of `via` would accept (a running job's lease has expired, so lockJob may re-take it). */
function jobIn(state: JobState, via: TransitionName) {
  return insertJob(state === 'running' && via === 'lockJob' ? { lifecycleStatus: state, lockUntil: minutesAgo(1) } : { lifecycleStatus: state });
}

describe('the transition table', () => {
  it('has no edge into queued and none out of a terminal state', () => {
    expect(TRANSITIONS.filter((t) => t.to === 'queued')).toEqual([]);
    expect(TRANSITIONS.filter((t) => ['succeeded', 'failed', 'cancelled'].includes(t.from))).toEqual([]);
  });

  for (const from of JOB_STATES) {
    for (const [via, attempt] of Object.entries(attempts) as [TransitionName, (typeof attempts)[TransitionName]][]) {
      const legal = isAllowed(from, attempt.expected, via);
      it(`${via} from ${from} is ${legal ? 'allowed and lands in ' + attempt.expected : 'refused and changes nothing'}`, async () => {
        const job = await jobIn(from, via);
        const before = await transitionsOf(job.id);
        if (legal) {
          const after = await attempt.run(job);
          expect(after.lifecycleStatus).toBe(attempt.expected);
          const history = await transitionsOf(job.id);
          expect(history).toHaveLength(before.length + 1);
          expect(history.at(-1)).toMatchObject({ fromStatus: from, toStatus: attempt.expected });
          // A terminal edge announces itself in the same transaction; other edges publish nothing.
          const events = await db.outboxEvent.findMany({ where: { aggregateId: job.id } });
          expect(events.map((e) => e.eventType)).toEqual(['succeeded', 'failed', 'cancelled'].includes(attempt.expected) ? [`ai.job.${attempt.expected}`] : []);
        } else {
          const err = await attempt.run(job).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(EngineError);
          expect(err).toBeInstanceOf(StaleTransitionError);
          expect(await db.aiJob.findUniqueOrThrow({ where: { id: job.id } })).toEqual(job);
          expect(await transitionsOf(job.id)).toHaveLength(before.length);
          expect(await db.outboxEvent.count({ where: { aggregateId: job.id } })).toBe(0);
        }
      });
    }
  }
});

describe('lockJob', () => {
  it('lets exactly one of 20 concurrent workers take a queued job', async () => {
    const job = await insertJob();
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => lockJob(db, job.id, `worker-${i}`)));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(LeaseHeldError);
    const row = await db.aiJob.findUniqueOrThrow({ where: { id: job.id } });
    expect(row).toMatchObject({ lifecycleStatus: 'running', attemptCount: 1, leaseVersion: 1 });
    expect(await transitionsOf(job.id)).toHaveLength(1);
  });

  it('refuses a running job whose lease is live and re-takes one whose lease expired', async () => {
    const live = await insertJob({ lifecycleStatus: 'running', lockUntil: secondsFromNow(30) });
    await expect(lockJob(db, live.id, 'worker-2')).rejects.toBeInstanceOf(LeaseHeldError);

    const expired = await insertJob({ lifecycleStatus: 'running', lockUntil: minutesAgo(2) });
    const relocked = await lockJob(db, expired.id, 'worker-2', { leaseMs: 45_000 });
    expect(relocked).toMatchObject({ lockedBy: 'worker-2', attemptCount: 2, leaseVersion: 2 });
    expect(relocked.lockUntil!.getTime() - relocked.lockedAt!.getTime()).toBe(45_000);
    expect((await transitionsOf(expired.id)).at(-1)).toMatchObject({ fromStatus: 'running', toStatus: 'running', actor: 'worker-2', leaseVersion: 2 });
  });

  it('re-takes a released lease for the next attempt with a new lease version', async () => {
    const job = await insertJob({ lifecycleStatus: 'running' });
    const released = await releaseLock(db, job.id, fence, failure);
    expect(released).toMatchObject({ lifecycleStatus: 'running', lockedBy: null, errorCode: 'PROVIDER_UNAVAILABLE' });
    const next = await lockJob(db, job.id, 'worker-3');
    expect(next).toMatchObject({ lifecycleStatus: 'running', lockedBy: 'worker-3', leaseVersion: 2, attemptCount: 2 });
  });

  it('says a missing job is not found', async () => {
    await expect(lockJob(db, '01JZZZZZZZZZZZZZZZZZZZZZZZ', 'w')).rejects.toBeInstanceOf(JobNotFoundError);
  });
});

describe('leases fence every later write', () => {
  it('extends only the current lease and reports a cancel request', async () => {
    const job = await insertJob({ lifecycleStatus: 'running' });
    const first = await extendLock(db, job.id, fence, { leaseMs: 90_000 });
    expect(first.cancelRequested).toBe(false);
    await db.aiJob.update({ where: { id: job.id }, data: { cancelRequestedAt: new Date() } });
    expect((await extendLock(db, job.id, fence)).cancelRequested).toBe(true);
    await expect(extendLock(db, job.id, { holder: TEST_HOLDER, leaseVersion: 2 })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(extendLock(db, job.id, { holder: 'someone-else', leaseVersion: 1 })).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('stops a worker that lost its lease from finishing the job', async () => {
    const job = await insertJob({ lifecycleStatus: 'running', lockUntil: minutesAgo(1) });
    await lockJob(db, job.id, 'worker-new');
    const before = await db.aiJob.findUniqueOrThrow({ where: { id: job.id } });
    await expect(markSucceeded(db, job.id, fence, { actor: TEST_HOLDER, outputHash: 'c'.repeat(64) })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(markFailed(db, job.id, fence, failure)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(releaseLock(db, job.id, fence, failure)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: job.id } })).toEqual(before);
  });

  it('joins the caller transaction: a rollback undoes markSucceeded and its audit row', async () => {
    const job = await insertJob({ lifecycleStatus: 'running' });
    await expect(
      db.$transaction(async (tx) => {
        await markSucceeded(tx, job.id, fence, { actor: TEST_HOLDER, outputHash: 'd'.repeat(64) });
        throw new Error('projector failed');
      }),
    ).rejects.toThrow('projector failed');
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: job.id } })).toEqual(job);
    expect(await transitionsOf(job.id)).toHaveLength(0);
    expect(await db.outboxEvent.count({ where: { aggregateId: job.id } })).toBe(0);
  });
});

describe('terminal transitions record what happened', () => {
  it('stores the error for the owner and for admins, and the audit reason', async () => {
    const job = await insertJob({ lifecycleStatus: 'running' });
    const failed = await markFailed(db, job.id, fence, { ...failure, reason: 'retries exhausted' });
    expect(failed).toMatchObject({
      errorCode: 'PROVIDER_UNAVAILABLE', publicErrorMessage: 'The AI provider is unavailable',
      internalErrorMessage: 'HTTP 503', lockedBy: null, lockUntil: null,
    });
    expect(failed.finishedAt).toBeInstanceOf(Date);
    expect((await transitionsOf(job.id)).at(-1)).toMatchObject({ actor: 'test', reason: 'retries exhausted', errorCode: 'PROVIDER_UNAVAILABLE', leaseVersion: 1 });
  });

  it('marks success with the output hash and full progress', async () => {
    const job = await insertJob({ lifecycleStatus: 'running' });
    const done = await markSucceeded(db, job.id, fence, { actor: TEST_HOLDER, outputHash: 'e'.repeat(64) });
    expect(done).toMatchObject({ lifecycleStatus: 'succeeded', outputHash: 'e'.repeat(64), progress: 100, lockedBy: null });
  });
});

describe('findExpiredLocks', () => {
  it('returns running jobs whose lease expired beyond the grace period, not released or live ones', async () => {
    const old = await insertJob({ lifecycleStatus: 'running', lockUntil: minutesAgo(5) });
    await insertJob({ lifecycleStatus: 'running', lockUntil: new Date(Date.now() - 10_000) });
    await insertJob({ lifecycleStatus: 'running', lockedBy: null, lockUntil: null });
    await insertJob({ lifecycleStatus: 'running' });
    const found = await findExpiredLocks(db, { graceMs: 30_000 });
    expect(found.map((j) => j.id)).toEqual([old.id]);
  });
});
