/**
 * `seq` is commit order (lib/jobs/stream-seq.ts): appends of a streaming attempt race the transitions other
 * actors make meanwhile — the engine settling a cancel, the reaper failing or releasing an expired lease, a new
 * lease taking the job — and a reader polling the log in one snapshot never sees a gap (an entry that commits
 * later with a lower `seq`), and the log ends as 1..n with no `seq` twice and nothing after the terminal entry.
 */
import { describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { lockJob, markCancelled, markFailed, releaseLock } from '../../lib/jobs/lifecycle-repository.ts';
import { createAttemptStreams } from '../../lib/stream/attempt-appender.ts';
import type { StreamEntry } from '../../lib/stream/protocol.ts';
import { createQueuedJob, seqsInOneSnapshot, until, wholeLog } from '../helpers/stream-helpers.ts';

const db = getPrisma();
const failure = { actor: 'reaper', errorCode: 'LEASE_EXPIRED', publicMessage: 'The job stopped responding and could not be completed' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Race = 'cancel' | 'fail' | 'release-and-relock';

/** One job: an attempt streams as fast as its appender allows while `race` happens after `delayMs`. */
async function raceOne(race: Race, delayMs: number): Promise<{ jobId: string; gaps: number[][] }> {
  const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
  const fence = { holder: 'worker-a', leaseVersion: job.leaseVersion };
  const stream = createAttemptStreams({ appendIntervalMs: 2 })(job, fence);
  let streaming = true;
  const produce = (async () => {
    for (let i = 0; streaming; i += 1) {
      stream.preview(i % 5 === 4 ? { type: 'item', field: 'items', index: i, item: { i } } : { type: 'text', field: 'text', delta: `t${i} ` });
      await sleep(1);
    }
  })();
  const gaps: number[][] = [];
  let checking = true;
  const check = (async () => {
    while (checking) {
      const seqs = await seqsInOneSnapshot(job.id);
      if (seqs.some((s, i) => s !== i + 1)) gaps.push(seqs);
    }
  })();
  // The race starts once the attempt is streaming (its first chunk is in), then after a varying delay.
  await until(async () => (await seqsInOneSnapshot(job.id)).length > 2, 'the first chunk');
  await sleep(delayMs);
  if (race === 'cancel') await markCancelled(db, job.id, { actor: 'engine', fence });
  if (race === 'fail') await markFailed(db, job.id, fence, failure);
  if (race === 'release-and-relock') {
    await releaseLock(db, job.id, fence, { ...failure, retryAt: new Date() });
    const next = await lockJob(db, job.id, 'worker-b');
    const second = createAttemptStreams({ appendIntervalMs: 2 })(next, { holder: 'worker-b', leaseVersion: next.leaseVersion });
    for (let i = 0; i < 20; i += 1) {
      second.preview({ type: 'text', field: 'text', delta: `b${i} ` });
      await sleep(1);
    }
    await second.close();
    await markFailed(db, job.id, { holder: 'worker-b', leaseVersion: next.leaseVersion }, failure);
  }
  await sleep(10); // let the first attempt keep trying after the race
  streaming = false;
  await produce;
  await stream.close();
  checking = false;
  await check;
  return { jobId: job.id, gaps };
}

function assertWellFormed(log: StreamEntry[]): void {
  expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
  const last = log.at(-1)!;
  expect(last.type === 'status' && ['cancelled', 'failed'].includes(last.status)).toBe(true);
  // Every chunk belongs to the segment opened by the running entry before it.
  let segment = -1;
  for (const e of log) {
    if (e.type === 'status' && e.status === 'running') segment = e.attempt;
    else if (e.type !== 'status') expect(e.attempt).toBe(segment);
  }
}

describe('seq under concurrent writers', () => {
  it('never shows a gap to a reader, never repeats, and ends with the terminal entry', { timeout: 60_000 }, async () => {
    const races: Race[] = ['cancel', 'fail', 'release-and-relock'];
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => raceOne(races[i % 3]!, 15 + (i % 4) * 10)));
    for (const { jobId, gaps } of results) {
      expect(gaps).toEqual([]);
      const log = await wholeLog(jobId);
      assertWellFormed(log);
      expect(log.filter((e) => e.type !== 'status').length).toBeGreaterThan(0);
      const job = await db.aiJob.findUniqueOrThrow({ where: { id: jobId } });
      expect(job.statusSeq).toBe(log.length);
    }
  });
});
