/**
 * Priority and fairness when capacity is short, proven at the repository with the database's clock pinned (no
 * timing): waiting jobs are ranked (priority first, then the user with fewer calls admitted in the window), and
 * a reservation only takes a slot if the window keeps enough for every due waiting job ranked before it; a job's own
 * waiting row is admitted with its hold, and a first lease has none to look for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlPool } from '../../lib/db/sql-pool.ts';
import { reserve, type Reservation } from '../../lib/capacity/reserve.ts';
import { reservationStatements } from '../../lib/capacity/reserve-statements.ts';
import { parkForCapacity } from '../../lib/jobs/lifecycle-wait.ts';
import { markCancelled } from '../../lib/jobs/lifecycle-repository.ts';
import { getPrisma } from '../../lib/db/client.ts';
import type { DbClock } from '../../lib/capacity/db-clock.ts';
import { fixedClock, holdRequest, racingPool, rowOf } from '../helpers/capacity.ts';
import { insertJob, TEST_HOLDER } from '../helpers/factories.ts';

let pool: SqlPool;
beforeAll(() => {
  pool = racingPool(10);
});
afterAll(async () => pool.end());

const T = Date.parse('2026-12-06T10:15:00.000Z');
const at = (seconds: number) => fixedClock(new Date(T + seconds * 1000));
const limits = (rpm: number) => ({ rpm, tpm: 10_000_000, maxInFlight: 10_000, maxOutputTokens: 10 });

interface TestJob { id: string; userId: string; priority: number }

/** A running job of `userId` whose reservation at `clock` is for model mock/mock-chat under RPM `rpm`. */
function attempt(job: TestJob, rpm: number, clock: DbClock): Promise<Reservation> {
  return reserve(holdRequest({
    clock, holdKey: `${job.id}:${clock.values[0] instanceof Date ? clock.values[0].getTime() : 0}`,
    job: { ...job, jobType: 'synthetic_job' }, capacity: { limits: limits(rpm), tokens: 10 },
  }), pool);
}

/** A leased job that was refused and waits until `dueSecond` (as the engine parks it). */
async function waiting(userId: string, priority: number, parkedAt: number, dueSecond: number): Promise<TestJob> {
  const job = await insertJob({ lifecycleStatus: 'running', userId, priority });
  await parkForCapacity({
    jobId: job.id, fence: { holder: TEST_HOLDER, leaseVersion: 1 }, actor: 'test', waitingFor: 'provider_capacity', code: 'PROVIDER_CAPACITY',
    route: { provider: 'mock', model: 'mock-chat' }, tokens: 10, waitMs: (dueSecond - parkedAt) * 1000, waits: 1, handoff: null, clock: at(parkedAt),
  });
  return { id: job.id, userId, priority };
}

const filler = (i: number, priority = 50): TestJob => ({ id: `filler-${i}-${priority}`, userId: 'filler', priority });

describe('priority', () => {
  it('the next free slot goes to the waiting job of higher priority, whichever tries first', async () => {
    for (let i = 0; i < 10; i += 1) await attempt(filler(i), 10, at(1)); // the window of minute 0 is full
    const low = await waiting('u-low', 50, 30, 60);
    const high = await waiting('u-high', 10, 30, 60);
    for (let i = 10; i < 19; i += 1) expect((await attempt(filler(i, 0), 10, at(60))).kind).toBe('held'); // 9 of 10 slots of minute 1
    expect(await attempt(low, 10, at(61))).toMatchObject({ kind: 'refused', refusal: { reason: 'yield' } });
    expect((await attempt(high, 10, at(62))).kind).toBe('held');
  });

  it('a waiting job that does not come back within the grace period keeps nothing', async () => {
    for (let i = 0; i < 10; i += 1) await attempt(filler(i), 10, at(1));
    const low = await waiting('u-low', 50, 30, 60);
    await waiting('u-high', 10, 30, 60);
    for (let i = 10; i < 19; i += 1) await attempt(filler(i, 0), 10, at(60));
    expect((await attempt(low, 10, at(91))).kind).toBe('held'); // the high-priority job's grace (30 s) is over
  });
});

describe('stale waiting rows', () => {
  it('a waiting job cancelled while it waited keeps nothing', async () => {
    for (let i = 0; i < 10; i += 1) await attempt(filler(i), 10, at(1));
    const low = await waiting('u-low', 50, 30, 60);
    const high = await waiting('u-high', 10, 30, 60);
    await markCancelled(getPrisma(), high.id, { fence: { holder: null, leaseVersion: 1 }, actor: 'api:u-high', reason: 'cancelled while waiting' });
    for (let i = 10; i < 19; i += 1) await attempt(filler(i, 0), 10, at(60));
    expect((await attempt(low, 10, at(61))).kind).toBe('held');
  });
});

describe('fairness', () => {
  it("200 jobs of one user cannot starve 5 of another: the 5 are admitted in the first window they are due in, even when all of the first user's waiting jobs try before them", async () => {
    const rpm = 60;
    const a = Array.from({ length: 200 }, (_, i) => ({ id: `a-${i}`, userId: 'user-a', priority: 50 }));
    const results0 = await Promise.all(a.map((job) => attempt(job, rpm, at(1)))); // minute 0: A's 200 jobs arrive first
    expect(results0.filter((r) => r.kind === 'held')).toHaveLength(60);
    // The 140 refused ones and B's 5 (arriving later in minute 0) wait for minute 1, as the engine parks them.
    const aWaiting = await Promise.all(Array.from({ length: 140 }, () => waiting('user-a', 50, 2, 60)));
    const bWaiting = await Promise.all(Array.from({ length: 5 }, () => waiting('user-b', 50, 30, 60)));
    // Minute 1, the worst order for B: every one of A's waiting jobs tries before any of B's.
    const aAdmitted = [];
    for (const job of aWaiting) aAdmitted.push(await attempt(job, rpm, at(60)));
    expect(aAdmitted.filter((r) => r.kind === 'held')).toHaveLength(55);
    const bAdmitted = await Promise.all(bWaiting.map((job, i) => attempt(job, rpm, at(61 + i))));
    expect(bAdmitted.map((r) => r.kind)).toEqual(['held', 'held', 'held', 'held', 'held']);
  });

  it('with no other user waiting, one user may use the whole window (nothing is kept idle)', async () => {
    const waiters = await Promise.all(Array.from({ length: 70 }, () => waiting('user-a', 50, 2, 60)));
    const results = [];
    for (const job of waiters) results.push(await attempt(job, 60, at(60)));
    expect(results.filter((r) => r.kind === 'held')).toHaveLength(60);
  });
});

describe('the job\'s own waiting row', () => {
  it('is admitted with the reservation that takes the hold, and no longer ranks before the others', async () => {
    const job = await waiting('u-own', 50, 30, 60);
    const before = await rowOf('CapacityWait', 'jobId = ?', [job.id]);
    expect(before).toMatchObject({ reason: 'provider_capacity' });
    // Its next lease (2) reserves: the row is locked and admitted in the same transaction.
    expect((await attempt(job, 10, at(61))).kind).toBe('held');
    expect(await rowOf('CapacityWait', 'jobId = ?', [job.id])).toMatchObject({ reason: 'admitted' });
  });

  it('is not looked for on a first lease, which has none (only a park, under a lease, writes one)', async () => {
    const first = holdRequest({ clock: at(1), firstLease: true });
    const again = holdRequest({ clock: at(1), firstLease: false });
    const waitStatements = (r: typeof first) => reservationStatements(r).filter((s) => /UPDATE `CapacityWait`|JOIN `CapacityWait` ow/.test(s.sql));
    expect(waitStatements(first)).toEqual([]);
    expect(waitStatements(again)).toHaveLength(2); // its lock, and the guarded UPDATE's admission of it
    expect(reservationStatements(first)).toHaveLength(reservationStatements(again).length - 1);
    expect(await reserve(first, pool)).toEqual({ kind: 'held', holdKey: first.holdKey });
    expect(await rowOf('CapacityHold', 'holdKey = ?', [first.holdKey])).toMatchObject({ state: 'held' });
  });
});
