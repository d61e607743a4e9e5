/**
 * The stream log's appender on the real database, driven directly with jobs locked as the engine locks them
 * (lib/stream/attempt-appender.ts): batching and its write bound, fencing by the lease, one segment per attempt,
 * exact outcomes after a failed append, and the publish of every committed batch.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { getPrisma, type AiJob } from '../../lib/db/client.ts';
import { getSqlPool, type SqlRunner } from '../../lib/db/sql-pool.ts';
import { lockJob, releaseLock } from '../../lib/jobs/lifecycle-repository.ts';
import { runSuccessScript, successScript } from '../../lib/jobs/lifecycle-success.ts';
import { CancelRequestedError, LeaseLostError } from '../../lib/jobs/lifecycle-errors.ts';
import { LeaseHeldError } from '../../lib/jobs/lifecycle-errors.ts';
import { APPEND_INTERVAL_MS, createAttemptStreams, type AttemptStreamOptions } from '../../lib/stream/attempt-appender.ts';
import { registerStreamPublisher } from '../../lib/stream/publisher-registry.ts';
import type { StreamPublisher } from '../../lib/stream/protocol.ts';
import { rawDb } from '../helpers/db.ts';
import { createQueuedJob, recordingPublisher, textOf, until, wholeLog } from '../helpers/stream-helpers.ts';

const db = getPrisma();
let recorder: ReturnType<typeof recordingPublisher>;
let previous: StreamPublisher;

beforeEach(() => {
  recorder = recordingPublisher();
  previous = registerStreamPublisher(recorder);
});
afterEach(() => {
  registerStreamPublisher(previous);
});

function open(job: AiJob, holder: string, options: AttemptStreamOptions = {}) {
  return createAttemptStreams(options)(job, { holder, leaseVersion: job.leaseVersion });
}

async function chunkRows(jobId: string): Promise<mysql.RowDataPacket[]> {
  const [rows] = await (await rawDb()).query<mysql.RowDataPacket[]>('SELECT seq, attempt, type, content, createdAt FROM AiJobStreamChunk WHERE jobId = ? ORDER BY seq', [jobId]);
  return rows;
}

describe('appending an attempt\'s previews', () => {
  it('appends them after the attempt\'s running entry, coalesced, and publishes each committed batch', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    expect(job.statusSeq).toBe(2);
    const stream = open(job, 'worker-a');
    stream.preview({ type: 'text', field: 'feedback', delta: 'Mass ' });
    stream.preview({ type: 'text', field: 'feedback', delta: 'attracts mass.' });
    stream.preview({ type: 'item', field: 'questions', index: 0, item: { question: 'Why?', options: ['a', 'b'] } });
    await stream.close();

    const log = await wholeLog(job.id);
    expect(log.map((e) => [e.seq, e.type, e.attempt])).toEqual([[1, 'status', 0], [2, 'status', 1], [3, 'text', 1], [4, 'item', 1]]);
    expect(log[2]).toMatchObject({ field: 'feedback', delta: 'Mass attracts mass.' });
    expect(log[3]).toMatchObject({ field: 'questions', index: 0, item: { question: 'Why?', options: ['a', 'b'] } });
    // Published: the queued and running entries by the lifecycle, the batch by the appender, each as stored.
    expect(recorder.entries(job.id)).toEqual(log);
  });

  it('costs at most one write statement per 200 ms: a batch waits for the interval and carries what came meanwhile', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    const stream = open(job, 'worker-a');
    let sent = '';
    const startedAt = Date.now();
    for (let i = 0; Date.now() - startedAt < 1_300; i += 1) {
      const delta = `w${i} `;
      sent += delta;
      stream.preview({ type: 'text', field: 'feedback', delta });
      await new Promise((r) => setTimeout(r, 3)); // a fast model: ~300 deltas a second
    }
    await stream.close();
    const rows = await chunkRows(job.id);
    expect(rows.map((r) => String(r.content)).join('')).toBe(sent);
    // One append statement per distinct createdAt (each stamps its batch once): never two within the interval.
    const appends = [...new Set(rows.map((r) => (r.createdAt as Date).getTime()))].sort((a, b) => a - b);
    for (let i = 1; i < appends.length; i += 1) expect(appends[i]! - appends[i - 1]!).toBeGreaterThanOrEqual(APPEND_INTERVAL_MS - 1);
    expect(appends.length).toBeGreaterThanOrEqual(3);
    expect(appends.length).toBeLessThanOrEqual(Math.floor((appends.at(-1)! - appends[0]!) / APPEND_INTERVAL_MS) + 1);
  });

  it('appends a batch of N characters at once instead of waiting for the interval', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    const stream = open(job, 'worker-a', { appendIntervalMs: 60_000, flushAtChars: 10 });
    stream.preview({ type: 'text', field: 'feedback', delta: 'twenty characters!!!' });
    await until(async () => (await chunkRows(job.id)).length === 1, 'the full batch to be appended');
    await stream.close();
  });
});

describe('handing the last batch to the projection', () => {
  const meta = { actor: 'worker-a', reason: 'attempt 1' };
  const noRows = { rows: [], refs: [] };

  it('appends nothing itself: the success script carries the batch, its chunks before the succeeded entry, published after the commit', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    const fence = { holder: 'worker-a', leaseVersion: job.leaseVersion };
    const stream = open(job, 'worker-a');
    stream.preview({ type: 'text', field: 'feedback', delta: 'Mass attracts mass.' });
    const final = await stream.handOver!();
    expect(final).toBeDefined();
    expect(await chunkRows(job.id)).toEqual([]);
    expect(recorder.entries(job.id).map((e) => e.type)).toEqual(['status', 'status']);

    const script = successScript(job, fence, { outputHash: 'h1' }, noRows, meta, undefined, final!)!;
    const succeeded = await runSuccessScript(job, fence, script, final!.committed);
    expect(succeeded).toMatchObject({ lifecycleStatus: 'succeeded', statusSeq: 4 });
    const log = await wholeLog(job.id);
    expect(log.map((e) => [e.seq, e.type])).toEqual([[1, 'status'], [2, 'status'], [3, 'text'], [4, 'status']]);
    expect(log[2]).toMatchObject({ field: 'feedback', delta: 'Mass attracts mass.' });
    expect(log[3]).toMatchObject({ status: 'succeeded' });
    expect(recorder.entries(job.id)).toEqual(log);
  });

  it('gives the claim the seq after its last chunk: no read of the log, no gap after earlier appends', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    const fence = { holder: 'worker-a', leaseVersion: job.leaseVersion };
    const stream = open(job, 'worker-a', { appendIntervalMs: 1, flushAtChars: 10 });
    stream.preview({ type: 'text', field: 'feedback', delta: 'first batch, appended' });
    await until(async () => (await chunkRows(job.id)).length === 1, 'the first batch to be appended');
    stream.preview({ type: 'item', field: 'questions', index: 0, item: { question: 'Why?' } });
    const final = (await stream.handOver!())!;
    const appended = (await chunkRows(job.id)).map((r) => Number(r.seq));
    expect(final.lastSeq).toBe(appended.at(-1)! + 1);

    const script = successScript(job, fence, { outputHash: 'h1' }, noRows, meta, undefined, final)!;
    const claim = script.statements[1]!.sql;
    expect(claim).toMatch(/^UPDATE `AiJob` SET /);
    expect(claim).not.toContain('AiJobStreamChunk');
    // No guard SELECT of its own: the audit row, right after the claim, guards (and takes the known seq).
    expect(script.statements.map((st) => st.sql.trimStart().split(' ')[0])).toEqual(['INSERT', 'UPDATE', 'INSERT', 'INSERT']);
    expect(script.statements[2]!.sql).toContain('INSERT INTO `AiJobTransition`');
    // Without a handed-over batch the claim reads the job's last chunk on the server, and a SELECT guards.
    const plain = successScript(job, fence, { outputHash: 'h1' }, noRows, meta)!;
    expect(plain.statements[0]!.sql).toContain('MAX(c.seq)');
    expect(plain.statements[1]!.sql).toMatch(/^SELECT /);

    const succeeded = await runSuccessScript(job, fence, script, final.committed);
    expect(succeeded).toMatchObject({ lifecycleStatus: 'succeeded', statusSeq: final.lastSeq + 1 });
    const log = await wholeLog(job.id);
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: final.lastSeq + 1 }, (_, i) => i + 1));
    expect(log.at(-1)).toMatchObject({ type: 'status', status: 'succeeded' });
    expect(recorder.entries(job.id)).toEqual(log);
  });

  it('rolls back with a refused claim (a cancel requested): no chunk without its success', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    const fence = { holder: 'worker-a', leaseVersion: job.leaseVersion };
    const stream = open(job, 'worker-a');
    stream.preview({ type: 'text', field: 'feedback', delta: 'never stored' });
    const final = (await stream.handOver!())!;
    await db.aiJob.update({ where: { id: job.id }, data: { cancelRequestedAt: new Date() } });
    const script = successScript(job, fence, { outputHash: 'h1' }, noRows, meta, undefined, final)!;
    await expect(runSuccessScript(job, fence, script, final.committed)).rejects.toBeInstanceOf(CancelRequestedError);
    expect(await chunkRows(job.id)).toEqual([]);
    expect(recorder.entries(job.id).map((e) => e.type)).toEqual(['status', 'status']);
  });

  it('refuses a claim carrying its batch once a newer lease took the job: nothing written, the lease named as lost', async () => {
    const created = await createQueuedJob();
    const job = await lockJob(db, created.id, 'worker-a');
    const fence = { holder: 'worker-a', leaseVersion: job.leaseVersion };
    const stream = open(job, 'worker-a');
    stream.preview({ type: 'text', field: 'feedback', delta: 'too late' });
    const final = (await stream.handOver!())!;
    await db.aiJob.update({ where: { id: job.id }, data: { lockUntil: new Date(Date.now() - 1_000) } });
    await lockJob(db, job.id, 'worker-b');
    const script = successScript(job, fence, { outputHash: 'h1' }, noRows, meta, undefined, final)!;
    await expect(runSuccessScript(job, fence, script, final.committed)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await chunkRows(job.id)).toEqual([]);
    const log = await wholeLog(job.id);
    expect(log.map((e) => [e.seq, e.type === 'status' ? e.status : e.type, e.attempt])).toEqual([[1, 'queued', 0], [2, 'running', 1], [3, 'running', 2]]);
  });

  it('refuses a claim carrying its batch on a job that already succeeded with this output: already_succeeded, nothing written', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    const fence = { holder: 'worker-a', leaseVersion: job.leaseVersion };
    const first = open(job, 'worker-a');
    first.preview({ type: 'text', field: 'feedback', delta: 'once' });
    const firstFinal = (await first.handOver!())!;
    await runSuccessScript(job, fence, successScript(job, fence, { outputHash: 'h1' }, noRows, meta, undefined, firstFinal)!, firstFinal.committed);
    const again = open(job, 'worker-a');
    again.preview({ type: 'text', field: 'feedback', delta: 'twice' });
    const secondFinal = (await again.handOver!())!;
    const script = successScript(job, fence, { outputHash: 'h1' }, noRows, meta, undefined, secondFinal)!;
    expect(await runSuccessScript(job, fence, script, secondFinal.committed)).toEqual({ kind: 'already_succeeded', outputHash: 'h1' });
    expect((await wholeLog(job.id)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it('appends the batch on its own when the projection cannot carry it, and first what would not fit in one batch', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    const stream = open(job, 'worker-a', { appendIntervalMs: 1, flushAtChars: 1_000_000 });
    // Three chunks of ~5 KB (items of 5,000 characters): more than one batch of 12 KB.
    for (let i = 0; i < 3; i += 1) stream.preview({ type: 'item', field: 'questions', index: i, item: 'x'.repeat(5_000) });
    const final = (await stream.handOver!())!;
    expect((await chunkRows(job.id)).map((r) => Number(r.seq))).toEqual([3, 4]);
    await final.appendAlone();
    expect((await chunkRows(job.id)).map((r) => Number(r.seq))).toEqual([3, 4, 5]);
    expect(recorder.entries(job.id).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('hands over nothing when nothing is left', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    expect(await open(job, 'worker-a').handOver!()).toBeUndefined();
  });
});

describe('fencing and segments', () => {
  it('a stale attempt appends nothing once another lease took the job; the new attempt has a segment of its own', async () => {
    const created = await createQueuedJob();
    const first = await lockJob(db, created.id, 'worker-a');
    const stale = open(first, 'worker-a');
    stale.preview({ type: 'text', field: 'feedback', delta: 'first try' });
    await until(async () => (await chunkRows(created.id)).length === 1, 'the first attempt\'s text');
    // A duplicate delivery while the lease is live is turned away before it could open a segment.
    await expect(lockJob(db, created.id, 'worker-b')).rejects.toBeInstanceOf(LeaseHeldError);
    // The lease expires; a redelivery takes the job with a new lease (a new attempt, a new segment).
    await db.aiJob.update({ where: { id: created.id }, data: { lockUntil: new Date(Date.now() - 1_000) } });
    const second = await lockJob(db, created.id, 'worker-b');
    stale.preview({ type: 'text', field: 'feedback', delta: ' LOST' });
    await stale.close();
    stale.preview({ type: 'text', field: 'feedback', delta: ' after close' });
    const fresh = open(second, 'worker-b');
    fresh.preview({ type: 'text', field: 'feedback', delta: 'second try' });
    await fresh.close();

    const log = await wholeLog(created.id);
    expect(log.map((e) => [e.seq, e.type === 'status' ? e.status : e.type, e.attempt])).toEqual([
      [1, 'queued', 0], [2, 'running', 1], [3, 'text', 1], [4, 'running', 2], [5, 'text', 2],
    ]);
    expect(textOf(log.slice(3), 'feedback')).toBe('second try');
    expect(await chunkRows(created.id)).toHaveLength(2);
  });

  it('a released job\'s next lock follows the release, which follows the chunks: one log, no gap, no repeat', async () => {
    const created = await createQueuedJob();
    const first = await lockJob(db, created.id, 'worker-a');
    const stream = open(first, 'worker-a');
    stream.preview({ type: 'text', field: 'feedback', delta: 'first try' });
    await stream.close();
    await releaseLock(db, created.id, { holder: 'worker-a', leaseVersion: first.leaseVersion }, {
      actor: 'worker-a', errorCode: 'PROVIDER_TIMEOUT', publicMessage: 'timed out', retryAt: new Date(),
    });
    const second = await lockJob(db, created.id, 'worker-b');
    const fresh = open(second, 'worker-b');
    fresh.preview({ type: 'text', field: 'feedback', delta: 'second try' });
    await fresh.close();

    const log = await wholeLog(created.id);
    expect(log.map((e) => [e.seq, e.type === 'status' ? e.status : e.type, e.attempt])).toEqual([
      [1, 'queued', 0], [2, 'running', 1], [3, 'text', 1], [4, 'queued', 1], [5, 'running', 2], [6, 'text', 2],
    ]);
    expect(second.statusSeq).toBe(5);
  });

  it('stops appending when the job reaches a terminal state while it streams', async () => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    const stream = open(job, 'worker-a');
    stream.preview({ type: 'text', field: 'feedback', delta: 'before' });
    await until(async () => (await chunkRows(job.id)).length === 1, 'the text before the cancel');
    const { markCancelled } = await import('../../lib/jobs/lifecycle-repository.ts');
    await markCancelled(db, job.id, { actor: 'test', fence: { holder: 'worker-a', leaseVersion: job.leaseVersion } });
    stream.preview({ type: 'text', field: 'feedback', delta: ' after' });
    await stream.close();
    const log = await wholeLog(job.id);
    expect(log.map((e) => (e.type === 'status' ? e.status : e.type))).toEqual(['queued', 'running', 'text', 'cancelled']);
  });
});

describe('an append whose outcome is unknown', () => {
  /** The real pool, whose first append statement fails — after it committed (`after`) or before it ran. */
  function failingOnce(when: 'before' | 'after'): () => SqlRunner {
    let failed = false;
    const pool = getSqlPool();
    const runner: SqlRunner = {
      query: (async (sql: string, values?: unknown) => {
        const isAppend = typeof sql === 'string' && sql.includes('INSERT INTO `AiJobStreamChunk`');
        if (!isAppend || failed) return pool.query(sql, values);
        failed = true;
        if (when === 'after') await pool.query(sql, values);
        throw Object.assign(new Error('connection lost'), { code: 'ER_SOCKET_UNEXPECTED_CLOSE' });
      }) as SqlRunner['query'],
    };
    return () => runner;
  }

  it.each(['after', 'before'] as const)('is settled exactly when the connection is lost %s its commit: no duplicate, nothing lost', async (when) => {
    const job = await lockJob(db, (await createQueuedJob()).id, 'worker-a');
    const stream = open(job, 'worker-a', { pool: failingOnce(when), appendIntervalMs: 20 });
    stream.preview({ type: 'text', field: 'feedback', delta: 'one ' });
    await until(async () => (await chunkRows(job.id)).length === 1, 'the first batch to land');
    stream.preview({ type: 'text', field: 'feedback', delta: 'two' });
    await stream.close();
    const log = await wholeLog(job.id);
    expect(log.filter((e) => e.type === 'text').map((e) => [e.seq, (e as { delta: string }).delta])).toEqual([[3, 'one '], [4, 'two']]);
    // Each batch published once, as stored.
    expect(recorder.entries(job.id).filter((e) => e.type === 'text')).toEqual(log.filter((e) => e.type === 'text'));
  });
});
