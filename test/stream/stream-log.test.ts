/**
 * Reads of the stream log (lib/stream/stream-log.ts) on the real database: pages from every position and of
 * every size are exact, a page stops before a `seq` it cannot see yet, and the status entries a transition
 * publishes are the entries the log returns for it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { lockJob, markFailed, releaseLock } from '../../lib/jobs/lifecycle-repository.ts';
import { createAttemptStreams } from '../../lib/stream/attempt-appender.ts';
import { registerStreamPublisher } from '../../lib/stream/publisher-registry.ts';
import type { StreamPublisher } from '../../lib/stream/protocol.ts';
import { STREAM_READ_SQL, readStreamHead, readStreamPage } from '../../lib/stream/stream-log.ts';
import type mysql from 'mysql2/promise';
import { rawDb } from '../helpers/db.ts';
import { createQueuedJob, recordingPublisher, wholeLog } from '../helpers/stream-helpers.ts';

const db = getPrisma();
const failure = { actor: 'engine', errorCode: 'PROVIDER_UNAVAILABLE', publicMessage: 'The AI provider is unavailable' };
let recorder: ReturnType<typeof recordingPublisher>;
let previous: StreamPublisher;
beforeEach(() => {
  recorder = recordingPublisher();
  previous = registerStreamPublisher(recorder);
});
afterEach(() => {
  registerStreamPublisher(previous);
});

/** queued, two attempts with chunks (a retry scheduled between them), failed. */
async function finishedLog(userId = 'user-1') {
  const job = await createQueuedJob(userId);
  for (const holder of ['w1', 'w2']) {
    const locked = await lockJob(db, job.id, holder);
    const fence = { holder, leaseVersion: locked.leaseVersion };
    const stream = createAttemptStreams({ appendIntervalMs: 1, flushAtChars: 1 })(locked, fence);
    for (let i = 0; i < 5; i += 1) {
      stream.preview(i === 2 ? { type: 'item', field: 'cards', index: 0, item: { front: holder } } : { type: 'text', field: 'answer', delta: `${holder}-${i} ` });
      await new Promise((r) => setTimeout(r, 3));
    }
    await stream.close();
    if (holder === 'w1') await releaseLock(db, job.id, fence, { ...failure, retryAt: new Date(Date.now() + 1_000) });
    else await markFailed(db, job.id, fence, failure);
  }
  return job;
}

describe('the log\'s pages', () => {
  it('are exact from every position, at every page size', async () => {
    const job = await finishedLog();
    const log = await wholeLog(job.id);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    for (const size of [1, 2, 3, 7]) {
      for (let k = 0; k <= log.length; k += 1) expect(await wholeLog(job.id, k, size), `after ${k}, pages of ${size}`).toEqual(log.slice(k));
    }
    expect(await readStreamHead(job.id)).toEqual({ lastSeq: log.length, terminal: true });
    expect(await readStreamPage('01ARZ3NDEKTSV4RRFFQ69G5FAV', 0)).toBeNull();
  });

  it('stop before a seq not visible yet, and say more follows', async () => {
    const job = await createQueuedJob();
    const locked = await lockJob(db, job.id, 'w1');
    // seq 4 committed while seq 3 is not visible to this read (as between the reads of the two tables).
    await (await rawDb()).query(
      "INSERT INTO AiJobStreamChunk (jobId, seq, attempt, type, field, content, createdAt) VALUES (?, 4, 1, 'text', 'answer', 'later', NOW(3))", [job.id],
    );
    const read = await readStreamPage(job.id, 0);
    expect(read?.page.entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(read?.page).toMatchObject({ lastSeq: 4, hasMore: true, terminal: false });
    expect(locked.statusSeq).toBe(2);
  });
});

describe('status entries', () => {
  it('are published, once committed, exactly as the log returns them', async () => {
    const job = await finishedLog('user-7');
    const log = await wholeLog(job.id);
    const published = recorder.entries(job.id).sort((a, b) => a.seq - b.seq);
    expect(published).toEqual(log);
    expect(recorder.pushes.every((p) => p.userId === 'user-7')).toBe(true);
    expect(log.filter((e) => e.type === 'status').map((e) => [e.type === 'status' && e.status, e.attempt])).toEqual([
      ['queued', 0], ['running', 1], ['queued', 1], ['running', 2], ['failed', 2],
    ]);
    expect(log.at(-1)).toMatchObject({ error: { code: 'PROVIDER_UNAVAILABLE', message: 'The AI provider is unavailable' } });
  });
});

describe('the reads\' plans', () => {
  it('reach every row through an index: the job by primary key, the chunks by theirs, the transitions by (jobId, seq)', async () => {
    const jobs = await Promise.all(Array.from({ length: 4 }, () => finishedLog()));
    const raw = await rawDb();
    const explain = async (sql: string, values: unknown[]) => (await raw.query<mysql.RowDataPacket[]>(`EXPLAIN ${sql}`, values))[0];
    const id = jobs[1]!.id;
    const head = await explain(STREAM_READ_SQL.job, [id]);
    expect([head[0]!.table, head[0]!.key, head[0]!.type]).toEqual(['j', 'PRIMARY', 'const']);
    // The chunks' highest seq: one dive into their primary key (MariaDB resolves the MAX from the index itself).
    expect(head[1]!.key === 'PRIMARY' || /Select tables optimized away/.test(String(head[1]!.Extra)), JSON.stringify(head[1])).toBe(true);
    const transitions = await explain(STREAM_READ_SQL.transitions, [id, 3, 200]);
    expect(transitions.map((r) => [r.key, r.type])).toEqual([['AiJobTransition_jobId_seq_key', 'range']]);
    expect(String(transitions[0]!.Extra)).not.toMatch(/filesort/);
    const chunks = await explain(STREAM_READ_SQL.chunks, [id, 3, 200]);
    expect(chunks.map((r) => [r.key, r.type])).toEqual([['PRIMARY', 'range']]);
    expect(String(chunks[0]!.Extra)).not.toMatch(/filesort/);
  });
});
