import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as userHandler } from '../../functions/api-user.ts';
import { jobListResponseSchema, jobStatusResponseSchema } from '../../lib/api/response-schemas.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { insertJob } from '../helpers/factories.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

const GET_JOB = 'GET /api/ai/jobs/{jobId}';
const LIST = 'GET /api/ai/jobs';

function getJob(jobId: string, sub = 'user-1') {
  return invoke(userHandler, apiEvent(GET_JOB, { claims: userClaims(sub), pathParameters: { jobId } }));
}

function list(query: Record<string, string> = {}, sub = 'user-1') {
  return invoke(userHandler, apiEvent(LIST, { claims: userClaims(sub), query }));
}

async function addArtifacts(jobId: string, count: number) {
  const rows = Array.from({ length: count }, (_, ordinal) => ({ id: newId(), jobId, artifactType: 'QuizQuestion', artifactId: newId(), ordinal }));
  // Inserted in reverse to show the view orders by ordinal.
  for (const row of [...rows].reverse()) await getPrisma().aiJobArtifact.create({ data: row });
  return rows;
}

describe('GET /api/ai/jobs/{jobId}', () => {
  it('returns exactly the frozen JobStatusResponse fields of a queued job', async () => {
    const job = await insertJob();
    const res = await getJob(job.id);
    expect(res.status).toBe(200);
    expect(jobStatusResponseSchema.parse(res.body)).toEqual(res.body);
    expect(res.body).toEqual({
      jobId: job.id, jobType: 'synthetic_job', lifecycleStatus: 'queued', queueName: 'interactive',
      priority: 50, progress: 0, createdAt: job.createdAt.toISOString(),
    });
  });

  it('adds result.artifacts (in projection order) for a succeeded job', async () => {
    const job = await insertJob({ lifecycleStatus: 'succeeded' });
    const rows = await addArtifacts(job.id, 3);
    const res = await getJob(job.id);
    expect(res.body.result).toEqual({
      artifactCount: 3,
      artifacts: rows.map((r) => ({ artifactType: r.artifactType, artifactId: r.artifactId })),
    });
    expect(res.body).toMatchObject({ lifecycleStatus: 'succeeded', progress: 100, startedAt: expect.any(String), finishedAt: expect.any(String) });
  });

  it('shows a failed job\'s public error and never its internal message, output hash, snapshot or credential', async () => {
    const job = await insertJob({
      lifecycleStatus: 'failed', errorCode: 'PROVIDER_UNAVAILABLE', publicErrorMessage: 'The AI service is unavailable',
      internalErrorMessage: 'stack: at secretFunction (/var/task/x.js:1)', credentialMode: 'user_deepseek_key', credentialId: newId(),
      outputHash: 'f'.repeat(64),
    });
    await getPrisma().aiJobSnapshot.create({
      data: { id: newId(), jobId: job.id, schemaVersion: 'v1', content: { prompt: 'the private input' }, contentHash: 'c'.repeat(64), redactionVersion: 1 },
    });
    const res = await getJob(job.id);
    expect(res.body).toMatchObject({ errorCode: 'PROVIDER_UNAVAILABLE', publicErrorMessage: 'The AI service is unavailable' });
    expect(res.body.result).toBeUndefined();
    for (const secret of ['secretFunction', 'private input', 'f'.repeat(64), job.credentialId!, 'user_deepseek_key', 'worker-test']) {
      expect(res.raw).not.toContain(secret);
    }
  });

  it('reports another user\'s job exactly like a missing one: 404 JOB_NOT_FOUND', async () => {
    const job = await insertJob({ userId: 'user-2' });
    const other = await getJob(job.id, 'user-1');
    const missing = await getJob(newId(), 'user-1');
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ error: { code: 'JOB_NOT_FOUND', message: 'Job not found' } });
    expect(missing.body).toEqual(other.body);
  });

  it.each(['not-a-ulid', 'a'.repeat(26), `${newId()}x`])('rejects the malformed id %s with 400 on path.jobId', async (jobId) => {
    const res = await getJob(jobId);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'path.jobId', message: expect.any(String) }] });
  });

  it('rejects unknown query parameters with 400', async () => {
    const job = await insertJob();
    const res = await invoke(userHandler, apiEvent(GET_JOB, { pathParameters: { jobId: job.id }, query: { verbose: '1' } }));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'query', message: expect.stringContaining('verbose') }]);
  });
});

describe('GET /api/ai/jobs', () => {
  it('lists only the caller\'s jobs, newest first, with nextCursor null on the last page', async () => {
    const mine = [await insertJob(), await insertJob(), await insertJob()];
    await insertJob({ userId: 'user-2' });
    const res = await list();
    expect(res.status).toBe(200);
    jobListResponseSchema.parse(res.body);
    expect(res.body.items.map((j: { jobId: string }) => j.jobId)).toEqual(mine.map((j) => j.id).reverse());
    expect(res.body.nextCursor).toBeNull();
  });

  it('filters by status and by job type', async () => {
    const queued = await insertJob({ lifecycleStatus: 'queued' });
    const failed = await insertJob({ lifecycleStatus: 'failed' });
    const quiz = await insertJob({ jobType: 'quiz_generation' });
    expect((await list({ status: 'failed' })).body.items.map((j: { jobId: string }) => j.jobId)).toEqual([failed.id]);
    expect((await list({ jobType: 'quiz_generation' })).body.items.map((j: { jobId: string }) => j.jobId)).toEqual([quiz.id]);
    expect((await list({ status: 'queued', jobType: 'synthetic_job' })).body.items.map((j: { jobId: string }) => j.jobId)).toEqual([queued.id]);
  });

  it('pages with an opaque cursor until every job was seen exactly once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) ids.push((await insertJob()).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list({ limit: '3', ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((j: { jobId: string }) => j.jobId));
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  it('orders by creation time, then id, and pages through jobs created in the same millisecond exactly once', async () => {
    const sameMs = new Date('2026-11-20T10:00:00.123Z');
    const tied: string[] = [];
    for (let i = 0; i < 5; i += 1) tied.push((await insertJob({ createdAt: sameMs })).id);
    // Newer ids, older creation times: the creation time decides.
    const older = (await insertJob({ createdAt: new Date(sameMs.getTime() - 1) })).id;
    const newer = (await insertJob({ createdAt: new Date(sameMs.getTime() + 1) })).id;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list({ limit: '2', ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((j: { jobId: string }) => j.jobId));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([newer, ...[...tied].reverse(), older]);
  });

  it('includes result artifacts for succeeded jobs in the list', async () => {
    const job = await insertJob({ lifecycleStatus: 'succeeded' });
    await addArtifacts(job.id, 2);
    const res = await list();
    expect(res.body.items[0].result.artifactCount).toBe(2);
  });

  it.each([
    [{ limit: '0' }, 'query.limit'],
    [{ limit: '101' }, 'query.limit'],
    [{ limit: 'ten' }, 'query.limit'],
    [{ status: 'done' }, 'query.status'],
    [{ jobType: 'Quiz Generation' }, 'query.jobType'],
    [{ cursor: 'not-a-cursor' }, 'query.cursor'],
    [{ cursor: Buffer.from('v1:not-an-id').toString('base64url') }, 'query.cursor'],
    [{ userId: 'user-2' }, 'query'],
  ])('rejects %o with 400 naming %s', async (query, path) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });
});
