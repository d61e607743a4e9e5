/**
 * `GET /api/ai/jobs/{jobId}/stream` (and the admin route) over HTTP against the local runtime: a job's stream log
 * read from every position, owner only, the long-poll, and its refusals. The job's log is written by the engine's
 * own code in this process (lock, appender, transitions) on the runtime's database.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getPrisma, type AiJob } from '../../lib/db/client.ts';
import { lockJob, markCancelled, releaseLock } from '../../lib/jobs/lifecycle-repository.ts';
import { createAttemptStreams } from '../../lib/stream/attempt-appender.ts';
import { streamPageSchema, type StreamEntry, type StreamPage } from '../../lib/stream/protocol.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';
import { createJobWithoutMessage, wholeLog } from '../helpers/stream-helpers.ts';

const db = getPrisma();
let e: E2e;
let alice: string;
let bob: string;
let admin: string;

beforeAll(async () => {
  e = await startE2e();
  [alice, bob, admin] = await Promise.all([e.token('alice'), e.token('bob'), e.token('root', { admin: true })]);
}, 60_000);
afterAll(async () => e?.stop());

/** A job of alice's with a log of two attempts: status entries and chunks (text and items), ending cancelled. */
async function jobWithLog(): Promise<AiJob> {
  const job = await createJobWithoutMessage('alice');
  for (const [holder, words] of [['worker-1', 6], ['worker-2', 9]] as const) {
    const locked = await lockJob(db, job.id, holder);
    const fence = { holder, leaseVersion: locked.leaseVersion };
    const stream = createAttemptStreams({ appendIntervalMs: 1, flushAtChars: 1 })(locked, fence);
    for (let i = 0; i < words; i += 1) {
      stream.preview(i % 4 === 3 ? { type: 'item', field: 'questions', index: i, item: { q: `q${i}` } } : { type: 'text', field: 'feedback', delta: `${holder}:${i} ` });
      await new Promise((r) => setTimeout(r, 3));
    }
    await stream.close();
    if (holder === 'worker-1') await releaseLock(db, job.id, fence, { actor: 'test', errorCode: 'PROVIDER_UNAVAILABLE', publicMessage: 'The AI provider is unavailable', retryAt: new Date() });
    else await markCancelled(db, job.id, { actor: 'test', fence });
  }
  return job;
}

async function page(jobId: string, query: string, token = alice): Promise<StreamPage> {
  const res = await e.api('GET', `/api/ai/jobs/${jobId}/stream${query}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return streamPageSchema.parse(res.body);
}

describe('reading the log over HTTP', () => {
  let job: AiJob;
  let log: StreamEntry[];
  beforeEach(async () => {
    job = await jobWithLog();
    log = await wholeLog(job.id);
  });

  it('resumes exactly from every position: what follows `after=k` is the log after k, page by page', async () => {
    expect(log.length).toBeGreaterThan(10);
    expect(log.map((x) => x.type === 'status' ? x.status : x.type)).toEqual(expect.arrayContaining(['queued', 'running', 'text', 'item', 'cancelled']));
    for (let k = 0; k <= log.length; k += 1) {
      const read: StreamEntry[] = [];
      let after = k;
      for (;;) {
        const p = await page(job.id, `?after=${after}`);
        read.push(...p.entries);
        expect(p).toMatchObject({ jobId: job.id, lastSeq: log.length, terminal: true });
        if (!p.hasMore) break;
        after = p.entries.at(-1)!.seq;
      }
      expect(read, `after=${k}`).toEqual(log.slice(k));
    }
    // The retry scheduled between the attempts carries its public error and when it is due.
    expect(log.find((x) => x.type === 'status' && x.status === 'queued' && x.seq > 1)).toMatchObject({ error: { code: 'PROVIDER_UNAVAILABLE' }, retryAt: expect.any(String) });
  });

  it('is the owner\'s only: another user gets 404 JOB_NOT_FOUND, an admin reads it through the admin route', async () => {
    const other = await e.api('GET', `/api/ai/jobs/${job.id}/stream?wait=5`, { token: bob });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('JOB_NOT_FOUND');
    const asAdmin = await e.api('GET', `/admin-api/ai/jobs/${job.id}/stream?after=2`, { token: admin });
    expect(asAdmin.status).toBe(200);
    expect(streamPageSchema.parse(asAdmin.body).entries).toEqual(log.slice(2, 202));
    expect((await e.api('GET', `/admin-api/ai/jobs/${job.id}/stream`, { token: alice })).status).toBe(403);
    expect((await e.api('GET', '/api/ai/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/stream', { token: alice })).status).toBe(404);
  });

  it('answers a finished job at once, whatever the wait', async () => {
    const p = await page(job.id, `?after=${log.length}&wait=20`);
    expect(p).toEqual({ jobId: job.id, entries: [], lastSeq: log.length, hasMore: false, terminal: true });
  });
});

describe('the long-poll', () => {
  it('holds the request until an entry follows `after`, then answers with it', async () => {
    const job = await createJobWithoutMessage('alice');
    const locked = await lockJob(db, job.id, 'worker-1');
    const fence = { holder: 'worker-1', leaseVersion: locked.leaseVersion };
    // A chunk the attempt appends…
    const forText = page(job.id, '?after=2&wait=15');
    const stream = createAttemptStreams()(locked, fence);
    stream.preview({ type: 'text', field: 'feedback', delta: 'Mass attracts mass.' });
    await stream.close();
    expect(await forText).toMatchObject({ entries: [{ seq: 3, type: 'text', delta: 'Mass attracts mass.' }], lastSeq: 3, terminal: false });
    // …and a status entry.
    const forStatus = page(job.id, '?after=3&wait=15');
    await markCancelled(db, job.id, { actor: 'test', fence });
    const p = await forStatus;
    expect(p.entries).toMatchObject([{ seq: 4, type: 'status', status: 'cancelled' }]);
    expect(p).toMatchObject({ lastSeq: 4, hasMore: false, terminal: true });
  });

  it('answers with nothing once the wait has passed', async () => {
    const job = await createJobWithoutMessage('alice');
    const started = Date.now();
    const p = await page(job.id, '?after=1&wait=1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(p).toEqual({ jobId: job.id, entries: [], lastSeq: 1, hasMore: false, terminal: false });
  });
});

describe('bad positions and waits', () => {
  it.each([
    ['after=-1', 'query.after'], ['after=abc', 'query.after'], ['after=1.5', 'query.after'], ['after=2147483648', 'query.after'],
    ['after=1e400', 'query.after'], ['wait=21', 'query.wait'], ['wait=-1', 'query.wait'], ['wait=soon', 'query.wait'], ['seq=3', 'query'],
  ])('refuses %s with 400 VALIDATION_FAILED naming %s, on both routes', async (query, path) => {
    const job = await createJobWithoutMessage('alice');
    for (const [route, token] of [[`/api/ai/jobs/${job.id}/stream`, alice], [`/admin-api/ai/jobs/${job.id}/stream`, admin]] as const) {
      const res = await e.api('GET', `${route}?${query}`, { token });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
  });
});
