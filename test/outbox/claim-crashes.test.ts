/**
 * The crash window between claim and send, for both kinds of claim (lib/outbox/outbox-claims.ts): a lease
 * (eager dispatch) waits for its TTL and is released by the next cycle; a held batch (the scheduled run) is
 * rolled back by the server when its dispatcher's connection closes, or after the lock TTL when the
 * dispatcher vanishes without closing it. Every case ends with the row's message on the queue exactly once.
 * Real MariaDB and fauxqs; the lease's TTL passes on the dispatcher's injected clock, the held batch's on the
 * server's (a 1 s `wait_timeout`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { databaseUrlFromEnv } from '../../lib/db/database-url.ts';
import { newId } from '../../lib/db/ids.ts';
import { createSqlPool, getSqlPool, type SqlPool } from '../../lib/db/sql-pool.ts';
import { dispatchOutboxEventById, runDispatchCycle } from '../../lib/outbox/dispatcher.ts';
import { claimDueOutboxBatch, settleHeldBatch, type HeldOutboxBatch } from '../../lib/outbox/held-claim.ts';
import { claimOutboxEventById } from '../../lib/outbox/outbox-claims.ts';
import { markOutboxPublished } from '../../lib/outbox/outbox-settlement.ts';
import { parseJobMessage } from '../../lib/queue/job-message.ts';
import { insertJob } from '../helpers/factories.ts';
import {
  createTestQueues, drainQueue, insertEnqueueEvent, movableClock, outboxRows, testDispatcherDeps, testSqsClient,
} from '../helpers/outbox-factories.ts';

function heldClaim(holder: string, now = new Date(), ttlMs = 60_000) {
  return { holder, now, leaseUntil: new Date(now.getTime() + ttlMs) };
}

async function sentJobIds(queueUrl: string): Promise<string[]> {
  return (await drainQueue(testSqsClient(), queueUrl)).map((m) => parseJobMessage(m.Body ?? '').jobId);
}

/** One queued job with its due enqueue row, and a dispatcher on fresh queues. */
async function oneDueRow(policy?: Parameters<typeof testDispatcherDeps>[0]['policy']) {
  const { queueUrls } = await createTestQueues();
  const job = await insertJob();
  const row = await insertEnqueueEvent(job);
  return { queueUrls, job, row, deps: testDispatcherDeps({ queueUrls, ...(policy ? { policy } : {}) }) };
}

/** Runs cycles (`pauseMs` apart) until one claims something or `withinMs` has passed; returns the last. */
async function cycleUntilClaimed(deps: ReturnType<typeof testDispatcherDeps>, withinMs: number, pauseMs: number) {
  const started = Date.now();
  let cycle = await runDispatchCycle(deps);
  while (cycle.claimed === 0 && Date.now() - started < withinMs) {
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    cycle = await runDispatchCycle(deps);
  }
  return cycle;
}

const pools: SqlPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end().catch(() => undefined)));
});

describe('crash between claim and send', () => {
  it('a lease (eager claim) abandoned before sending is released after the lock TTL and sent once', async () => {
    const clock = movableClock();
    const { queueUrls, job, row, deps } = await oneDueRow({ now: clock.now });

    // The crash: eager dispatch claimed the row, then its Lambda died before sending.
    const lease = heldClaim('crashed:1', clock.now());
    expect((await claimOutboxEventById(getSqlPool(), row.id, lease))?.id).toBe(row.id);
    // While leased, `availableAt` holds the end of the lease.
    expect((await outboxRows([row.id]))[0]).toMatchObject({ status: 'processing', lockedBy: 'crashed:1', availableAt: lease.leaseUntil });

    clock.advance(30_000);
    expect(await runDispatchCycle(deps)).toMatchObject({ released: 0, claimed: 0 });

    clock.advance(31_000); // 61 s after the claim: past the 60 s TTL
    expect(await runDispatchCycle(deps)).toMatchObject({ released: 1, claimed: 1, published: 1 });
    expect(await runDispatchCycle(deps)).toMatchObject({ released: 0, claimed: 0 });
    // The crashed holder waking up late cannot touch the row any more.
    expect(await markOutboxPublished(getSqlPool(), [row.id], 'crashed:1', clock.now())).toBe(0);

    expect(await sentJobIds(queueUrls.interactive)).toEqual([job.id]);
    expect((await outboxRows([row.id]))[0]).toMatchObject({ status: 'published', attemptCount: 0 });
  });

  it('a held batch is invisible to other dispatchers, and due again at once when its dispatcher dies', async () => {
    const { queueUrls, job, row, deps } = await oneDueRow();

    const batch = await claimDueOutboxBatch(getSqlPool(), heldClaim('crashing:1'), 10, 60_000);
    expect(batch.rows.map((r) => r.id)).toEqual([row.id]);
    // Held, not written: the row is still `pending` to everyone else, and skipped by their claims.
    expect((await outboxRows([row.id]))[0]).toMatchObject({ status: 'pending', lockedBy: null });
    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 0 });

    // The crash: the process is gone, so is its socket; the server rolls the claim back as soon as it reads
    // the close (asynchronously, hence the short wait), long before any lock TTL.
    await batch.connection?.destroy();
    expect(await cycleUntilClaimed(deps, 5_000, 50)).toMatchObject({ released: 0, claimed: 1, published: 1 });
    expect(await sentJobIds(queueUrls.interactive)).toEqual([job.id]);
    expect((await outboxRows([row.id]))[0]).toMatchObject({ status: 'published', attemptCount: 0 });
  });

  it('a held batch whose dispatcher vanished without closing its connection is released after the lock TTL and sent once', async () => {
    const { queueUrls, job, row, deps } = await oneDueRow();
    // The vanished dispatcher has a pool of its own: its connection stays open, idle, holding the lock.
    const vanished = createSqlPool(databaseUrlFromEnv());
    pools.push(vanished);

    const batch: HeldOutboxBatch = await claimDueOutboxBatch(vanished, heldClaim(`vanished:${newId()}`), 10, 1_000);
    expect(batch.rows.map((r) => r.id)).toEqual([row.id]);
    const claimedAt = Date.now();
    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 0 });

    // The server drops the session after its 1 s wait_timeout; the next cycle after that sends the row.
    expect((await cycleUntilClaimed(deps, 15_000, 250)).published).toBe(1);
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(1_000);
    expect(await sentJobIds(queueUrls.interactive)).toEqual([job.id]);
    // The vanished dispatcher coming back cannot settle: its transaction is gone with its session.
    await expect(settleHeldBatch(batch, { published: [row.id], retries: [], handOff: [] })).rejects.toThrow();
    expect((await outboxRows([row.id]))[0]).toMatchObject({ status: 'published', attemptCount: 0 });
  });

  it('eager dispatch of a new row the scheduled dispatcher holds skips it at once (the create never waits) and the batch sends it', async () => {
    const { queueUrls, job, row, deps } = await oneDueRow();

    // The scheduled run claimed the brand-new row between its creating commit and the create's eager dispatch.
    const batch = await claimDueOutboxBatch(getSqlPool(), heldClaim('scheduled:1'), 10, 60_000);
    expect(batch.rows.map((r) => r.id)).toEqual([row.id]);
    // While the batch still holds the row: eager dispatch returns without waiting on its lock (a lock wait
    // would last innodb_lock_wait_timeout, 50 s by default; the deadline only makes that failure readable).
    const stillWaiting = new Promise<string>((resolve) => { setTimeout(() => resolve('still waiting on the row lock'), 10_000).unref(); });
    expect(await Promise.race([dispatchOutboxEventById(row.id, deps), stillWaiting])).toBe('skipped');
    expect(batch.connection).not.toBeNull();
    expect((await outboxRows([row.id]))[0]).toMatchObject({ status: 'pending', lockedBy: null });

    await settleHeldBatch(batch, { published: [row.id], retries: [], handOff: [] });
    expect(await sentJobIds(queueUrls.interactive)).toEqual([]); // the batch "sent" it; eager sent nothing
    expect((await outboxRows([row.id]))[0]).toMatchObject({ status: 'published', lockedBy: 'scheduled:1' });
    expect(job.id).toBe(row.aggregateId);
  });
});
