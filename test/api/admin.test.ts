import { receiveAll, setUpApiEnvironment, type ApiTestEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as adminHandler } from '../../functions/api-admin.ts';
import { handler as userHandler } from '../../functions/api-user.ts';
import { adminJobDetailSchema, adminJobListResponseSchema } from '../../lib/api/response-schemas.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { countRows } from '../helpers/db.ts';
import { insertJob, minutesAgo } from '../helpers/factories.ts';
import { adminClaims, apiEvent, invoke, userClaims } from '../helpers/api-events.ts';

let env: ApiTestEnvironment;
beforeAll(async () => {
  env = await setUpApiEnvironment();
});

const flashcardInput = { sourceText: 'Mitochondria make ATP. Ribosomes make proteins.', maxCards: 5 };

function admin(routeKey: string, options: { jobId?: string; query?: Record<string, string> } = {}) {
  return invoke(adminHandler, apiEvent(routeKey, {
    claims: adminClaims(), query: options.query, ...(options.jobId ? { pathParameters: { jobId: options.jobId } } : {}),
  }));
}

/** A flashcard job created through the user API (real snapshot and outbox row). */
async function createViaApi(sub = 'user-1'): Promise<string> {
  const res = await invoke(userHandler, apiEvent('POST /api/ai/flashcard-generations', { claims: userClaims(sub), body: flashcardInput }));
  expect(res.status).toBe(202);
  return res.body.jobId;
}

async function usage(jobId: string, attemptNo: number, tokens: number, costUsd: string, model = 'mock-model', call: { latencyMs?: number; errorCode?: string } = {}) {
  await getPrisma().aiUsageLog.create({
    data: {
      id: newId(), jobId, userId: 'user-1', attemptNo, provider: 'mock', model, credentialMode: 'platform_key',
      promptTokens: tokens, completionTokens: tokens * 2, totalTokens: tokens * 3, costUsd, priceVersion: 'p1', latencyMs: call.latencyMs ?? 10,
      errorCode: call.errorCode ?? null,
    },
  });
}

describe('GET /admin-api/ai/jobs', () => {
  it('lists every user\'s jobs with owner and attempts, newest first', async () => {
    const a = await insertJob({ userId: 'user-a' });
    const b = await insertJob({ userId: 'user-b', lifecycleStatus: 'failed', attemptCount: 3 });
    const res = await admin('GET /admin-api/ai/jobs');
    expect(res.status).toBe(200);
    adminJobListResponseSchema.parse(res.body);
    expect(res.body.items.map((j: { jobId: string }) => j.jobId)).toEqual([b.id, a.id]);
    expect(res.body.items[0]).toMatchObject({ userId: 'user-b', attemptCount: 3, maxAttempts: 3, triggerType: 'user', parentJobId: null });
  });

  it('filters by jobType, status, queueName, userId and creation time range', async () => {
    const old = await insertJob({ createdAt: minutesAgo(120) });
    const quiz = await insertJob({ jobType: 'quiz_generation', queueName: 'background' });
    const failed = await insertJob({ lifecycleStatus: 'failed', userId: 'user-9' });
    const ids = async (query: Record<string, string>) => (await admin('GET /admin-api/ai/jobs', { query })).body.items.map((j: { jobId: string }) => j.jobId);
    expect(await ids({ jobType: 'quiz_generation' })).toEqual([quiz.id]);
    expect(await ids({ queueName: 'background' })).toEqual([quiz.id]);
    expect(await ids({ status: 'failed' })).toEqual([failed.id]);
    expect(await ids({ userId: 'user-9' })).toEqual([failed.id]);
    expect(await ids({ createdTo: minutesAgo(60).toISOString() })).toEqual([old.id]);
    expect(await ids({ createdFrom: minutesAgo(60).toISOString() })).toEqual([failed.id, quiz.id]);
  });

  it('filters by the error code a job ended with (the console\'s Trouble page)', async () => {
    const dead = await insertJob({ lifecycleStatus: 'failed', errorCode: 'DEAD_LETTERED' });
    await insertJob({ lifecycleStatus: 'failed', errorCode: 'INTERNAL' });
    await insertJob();
    const res = await admin('GET /admin-api/ai/jobs', { query: { errorCode: 'DEAD_LETTERED' } });
    expect(res.body.items.map((j: { jobId: string }) => j.jobId)).toEqual([dead.id]);
  });

  it('pages with a cursor', async () => {
    for (let i = 0; i < 3; i += 1) await insertJob();
    const first = await admin('GET /admin-api/ai/jobs', { query: { limit: '2' } });
    const second = await admin('GET /admin-api/ai/jobs', { query: { limit: '2', cursor: first.body.nextCursor } });
    expect(first.body.items).toHaveLength(2);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
  });

  it.each([
    [{ queueName: 'urgent' }, 'query.queueName'],
    [{ createdFrom: 'yesterday' }, 'query.createdFrom'],
    [{ createdFrom: '2026-01-02T00:00:00Z', createdTo: '2026-01-01T00:00:00Z' }, 'query.createdTo'],
    [{ errorCode: 'dead lettered' }, 'query.errorCode'],
    [{ owner: 'x' }, 'query'],
  ])('rejects %o with 400 naming %s', async (query, path) => {
    const res = await admin('GET /admin-api/ai/jobs', { query });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });
});

describe('GET /admin-api/ai/jobs/{jobId}', () => {
  it('adds the internal error, the transition history and usage per attempt to the status fields', async () => {
    const jobId = await createViaApi();
    await invoke(userHandler, apiEvent('POST /api/ai/jobs/{jobId}/cancel', { claims: userClaims('user-1'), pathParameters: { jobId } }));
    await getPrisma().aiJob.update({ where: { id: jobId }, data: { internalErrorMessage: 'provider said: 500 at upstream.js:12' } });
    await usage(jobId, 1, 10, '0.00010000', 'mock-model', { latencyMs: 1200, errorCode: 'PROVIDER_UNAVAILABLE' });
    await usage(jobId, 1, 5, '0.00000001', 'other-model', { latencyMs: 300 });
    await usage(jobId, 2, 20, '0.00020000');
    const res = await admin('GET /admin-api/ai/jobs/{jobId}', { jobId });
    expect(res.status).toBe(200);
    const view = adminJobDetailSchema.parse(res.body);
    expect(view).toMatchObject({ jobId, userId: 'user-1', lifecycleStatus: 'cancelled', internalErrorMessage: 'provider said: 500 at upstream.js:12' });
    expect(view.transitions.map((t) => [t.fromStatus, t.toStatus, t.actor])).toEqual([
      [null, 'queued', 'user:user-1'],
      ['queued', 'cancelled', 'api:user-1'],
    ]);
    expect(view.usage.attempts).toEqual([
      {
        attemptNo: 1, calls: 2, promptTokens: 15, completionTokens: 30, totalTokens: 45, costUsd: '0.00010001', models: ['mock/mock-model', 'mock/other-model'],
        latencyMs: 1500, errorCodes: ['PROVIDER_UNAVAILABLE'],
      },
      { attemptNo: 2, calls: 1, promptTokens: 20, completionTokens: 40, totalTokens: 60, costUsd: '0.00020000', models: ['mock/mock-model'], latencyMs: 10, errorCodes: [] },
    ]);
    expect(view.inputSnapshot?.content).toEqual(flashcardInput);
    expect(view.inputSnapshot).toMatchObject({ redactionVersion: 1 });
    expect(view.businessRows).toBeNull();
    expect(view.usage.total).toEqual({ calls: 3, promptTokens: 35, completionTokens: 70, totalTokens: 105, costUsd: '0.00030001' });
  });

  it('shows the input snapshot redacted: secret fields stored before today\'s rules are hidden at read time too', async () => {
    const jobId = await createViaApi();
    // A snapshot as an older redaction version might have stored it: a key under a sensitive name, a bearer token in text.
    await getPrisma().aiJobSnapshot.update({
      where: { jobId },
      data: { content: { sourceText: 'call with Bearer abcdefghijklmnopqrstuvwxyz012345', apiKey: 'sk-abcdefghijklmnopqrstuvwx', maxCards: 5 }, redactionVersion: 0 },
    });
    const res = await admin('GET /admin-api/ai/jobs/{jobId}', { jobId });
    const view = adminJobDetailSchema.parse(res.body);
    expect(view.inputSnapshot?.content).toEqual({ sourceText: 'call with Bearer [REDACTED]', apiKey: '[REDACTED]', maxCards: 5 });
    expect(res.raw).not.toContain('abcdefghijklmnopqrstuvw');
  });

  it('shows a succeeded job\'s business rows as its result route returns them; null snapshot once retention deleted it', async () => {
    const jobId = await createViaApi('user-1');
    const db = getPrisma();
    await db.flashcard.create({ data: { id: newId(), jobId, userId: 'user-1', ordinal: 0, front: 'ATP?', back: 'Mitochondria' } });
    await db.aiJob.update({ where: { id: jobId }, data: { lifecycleStatus: 'succeeded', finishedAt: new Date() } });
    await db.aiJobSnapshot.delete({ where: { jobId } });
    const view = adminJobDetailSchema.parse((await admin('GET /admin-api/ai/jobs/{jobId}', { jobId })).body);
    expect(view.inputSnapshot).toBeNull();
    expect(view.businessRows).toEqual({ jobId, flashcards: [{ id: expect.any(String), ordinal: 0, front: 'ATP?', back: 'Mitochondria' }] });
    const user = await invoke(userHandler, apiEvent('GET /api/ai/flashcard-generations/{jobId}', { claims: userClaims('user-1'), pathParameters: { jobId } }));
    expect(view.businessRows).toEqual(user.body);
  });

  it('the user view of the same job has none of the internal fields', async () => {
    const jobId = await createViaApi();
    await getPrisma().aiJob.update({ where: { id: jobId }, data: { internalErrorMessage: 'internal detail' } });
    const res = await invoke(userHandler, apiEvent('GET /api/ai/jobs/{jobId}', { claims: userClaims('user-1'), pathParameters: { jobId } }));
    for (const field of ['internalErrorMessage', 'transitions', 'usage', 'userId', 'attemptCount', 'snapshot', 'inputSnapshot', 'businessRows', 'outputHash', 'credentialId']) {
      expect(res.body).not.toHaveProperty(field);
    }
    expect(res.raw).not.toContain('internal detail');
    expect(res.raw).not.toContain('Mitochondria');
  });

  it('404 JOB_NOT_FOUND for a missing job; 400 for a malformed id', async () => {
    expect((await admin('GET /admin-api/ai/jobs/{jobId}', { jobId: newId() })).status).toBe(404);
    expect((await admin('GET /admin-api/ai/jobs/{jobId}', { jobId: 'nope' })).status).toBe(400);
  });
});

describe('POST /admin-api/ai/jobs/{jobId}/retry', () => {
  it.each(['failed', 'cancelled'] as const)('retries a %s job as a new job: parentJobId, snapshot copied, own outbox row, dispatched', async (state) => {
    const parentId = await createViaApi('user-7');
    await getPrisma().aiJob.update({ where: { id: parentId }, data: { lifecycleStatus: state, finishedAt: new Date() } });
    const res = await admin('POST /admin-api/ai/jobs/{jobId}/retry', { jobId: parentId });
    expect(res.status).toBe(201);
    const view = adminJobDetailSchema.parse(res.body);
    expect(view).toMatchObject({ parentJobId: parentId, triggerType: 'admin_retry', userId: 'user-7', lifecycleStatus: 'queued', jobType: 'flashcard_generation' });
    expect(view.jobId).not.toBe(parentId);
    expect(res.headers.location).toBe(`/admin-api/ai/jobs/${view.jobId}`);
    const db = getPrisma();
    const [parent, child] = await Promise.all([parentId, view.jobId].map((id) => db.aiJob.findUniqueOrThrow({ where: { id } })));
    expect(child).toMatchObject({ targetType: parent!.targetType, targetId: parent!.targetId, credentialMode: parent!.credentialMode, inputHash: parent!.inputHash });
    const [parentSnapshot, childSnapshot] = await Promise.all([parentId, view.jobId].map((jobId) => db.aiJobSnapshot.findUniqueOrThrow({ where: { jobId } })));
    expect(childSnapshot!.id).not.toBe(parentSnapshot!.id);
    expect(childSnapshot!.content).toEqual(parentSnapshot!.content);
    expect(await countRows('OutboxEvent', "aggregateId = ? AND status = 'published'", [view.jobId])).toBe(1);
    const bodies = (await receiveAll(env.queues.background.queueUrl)).map((m) => JSON.parse(m.Body ?? '{}').jobId);
    expect(bodies).toContain(view.jobId);
  });

  it('is idempotent per parent: a second retry returns the first retry with 200', async () => {
    const parentId = await createViaApi();
    await getPrisma().aiJob.update({ where: { id: parentId }, data: { lifecycleStatus: 'failed', finishedAt: new Date() } });
    const first = await admin('POST /admin-api/ai/jobs/{jobId}/retry', { jobId: parentId });
    const second = await admin('POST /admin-api/ai/jobs/{jobId}/retry', { jobId: parentId });
    expect(second.status).toBe(200);
    expect(second.body.jobId).toBe(first.body.jobId);
    expect(await countRows('AiJob', 'parentJobId = ?', [parentId])).toBe(1);
  });

  it.each(['queued', 'running', 'succeeded'] as const)('refuses a %s job: 409 JOB_NOT_RETRYABLE, nothing created', async (state) => {
    const job = await insertJob({ lifecycleStatus: state });
    const res = await admin('POST /admin-api/ai/jobs/{jobId}/retry', { jobId: job.id });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('JOB_NOT_RETRYABLE');
    expect(await countRows('AiJob')).toBe(1);
  });

  it('refuses a failed job whose snapshot is gone (deleted by retention): 409 SNAPSHOT_EXPIRED', async () => {
    const job = await insertJob({ lifecycleStatus: 'failed' });
    const res = await admin('POST /admin-api/ai/jobs/{jobId}/retry', { jobId: job.id });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('SNAPSHOT_EXPIRED');
  });

  it('refuses a failed job whose snapshot expired but is not deleted yet: 409 SNAPSHOT_EXPIRED, nothing created', async () => {
    const jobId = await createViaApi();
    await getPrisma().aiJob.update({ where: { id: jobId }, data: { lifecycleStatus: 'failed', finishedAt: new Date() } });
    const { expiresAt } = await getPrisma().aiJobSnapshot.findUniqueOrThrow({ where: { jobId } });
    // Created with the job type's retention (30 days by default, ADR-003 §8.4).
    expect(Math.round(((expiresAt?.getTime() ?? 0) - Date.now()) / 86_400_000)).toBe(30);
    await getPrisma().aiJobSnapshot.update({ where: { jobId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const res = await admin('POST /admin-api/ai/jobs/{jobId}/retry', { jobId });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'SNAPSHOT_EXPIRED' });
    expect(res.body.error.message).toMatch(/expired at/);
    expect(await countRows('AiJob')).toBe(1);
  });

  it('404 JOB_NOT_FOUND for a missing job', async () => {
    expect((await admin('POST /admin-api/ai/jobs/{jobId}/retry', { jobId: newId() })).status).toBe(404);
  });
});

describe('POST /admin-api/ai/jobs/{jobId}/cancel', () => {
  it("cancels any user's queued job at once, recording the admin as actor", async () => {
    const jobId = await createViaApi('user-9');
    const res = await admin('POST /admin-api/ai/jobs/{jobId}/cancel', { jobId });
    expect(res.status).toBe(200);
    expect(adminJobDetailSchema.parse(res.body)).toMatchObject({ jobId, userId: 'user-9', lifecycleStatus: 'cancelled' });
    const last = await getPrisma().aiJobTransition.findFirstOrThrow({ where: { jobId, toStatus: 'cancelled' } });
    expect(last.actor).toBe('admin:admin-1');
  });

  it('requests cancellation of a running job: 202, cancelRequestedAt set', async () => {
    const job = await insertJob({ lifecycleStatus: 'running', userId: 'user-3' });
    const res = await admin('POST /admin-api/ai/jobs/{jobId}/cancel', { jobId: job.id });
    expect(res.status).toBe(202);
    expect((await getPrisma().aiJob.findUniqueOrThrow({ where: { id: job.id } })).cancelRequestedAt).not.toBeNull();
  });

  it('409 for a finished job, 404 for a missing one, 403 for a non-admin', async () => {
    const done = await insertJob({ lifecycleStatus: 'succeeded' });
    const res = await admin('POST /admin-api/ai/jobs/{jobId}/cancel', { jobId: done.id });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('JOB_NOT_CANCELLABLE');
    expect((await admin('POST /admin-api/ai/jobs/{jobId}/cancel', { jobId: newId() })).status).toBe(404);
    const user = await invoke(adminHandler, apiEvent('POST /admin-api/ai/jobs/{jobId}/cancel', { claims: userClaims('user-1'), pathParameters: { jobId: done.id } }));
    expect(user.status).toBe(403);
  });
});

describe('GET /admin-api/ai/usage/users', () => {
  /** One ledger row of `userId`'s job (calls read live: no rollup watermark in this database). */
  async function spend(userId: string, costUsd: string, tokens = 10): Promise<void> {
    const job = await insertJob({ userId });
    await getPrisma().aiUsageLog.create({
      data: {
        id: newId(), jobId: job.id, userId, attemptNo: 1, provider: 'mock', model: 'mock-model', credentialMode: 'platform_key',
        promptTokens: tokens, completionTokens: tokens, totalTokens: 2 * tokens, costUsd, priceVersion: 'p1', latencyMs: 10,
      },
    });
  }

  it('lists the `limit` users with the highest cost (ties by id), with the count and totals of every user', async () => {
    await spend('user-a', '0.10000000');
    await spend('user-a', '0.20000000');
    await spend('user-bb', '0.50000000');
    await spend('user-b', '0.50000000');
    await spend('user-c', '0.00000001');
    const all = await admin('GET /admin-api/ai/usage/users');
    expect(all.status).toBe(200);
    expect(new Set(all.body.rows.map((r: { userId: string }) => r.userId))).toEqual(new Set(['user-a', 'user-b', 'user-bb', 'user-c']));
    const top = await admin('GET /admin-api/ai/usage/users', { query: { limit: '2' } });
    expect(top.status).toBe(200);
    expect(top.body.rows.map((r: { userId: string }) => r.userId).sort()).toEqual(['user-b', 'user-bb']);
    expect(top.body.userCount).toBe(4);
    expect(top.body.total).toEqual({ calls: 5, promptTokens: 50, completionTokens: 50, totalTokens: 100, costUsd: '1.30000001' });
    expect(top.body.total).toEqual(all.body.total);
    expect((await admin('GET /admin-api/ai/usage')).body.total).toEqual(top.body.total);
    const third = await admin('GET /admin-api/ai/usage/users', { query: { limit: '3' } });
    expect(third.body.rows.map((r: { userId: string }) => r.userId).sort()).toEqual(['user-a', 'user-b', 'user-bb']);
  });

  it('answers an empty range with no rows, zero users and zero totals', async () => {
    const res = await admin('GET /admin-api/ai/usage/users', { query: { limit: '5' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rows: [], userCount: 0, total: { calls: 0, costUsd: '0.00000000' } });
  });

  it('refuses a limit outside 1–1000, naming it', async () => {
    for (const limit of ['0', '1001', 'ten', '2.5']) {
      const res = await admin('GET /admin-api/ai/usage/users', { query: { limit } });
      expect(res.status, limit).toBe(400);
      expect(JSON.stringify(res.body.error.details), limit).toContain('query.limit');
    }
    expect((await admin('GET /admin-api/ai/usage', { query: { limit: '5' } })).status).toBe(400);
  });
});
