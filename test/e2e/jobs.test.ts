/** The whole system over HTTP: create, watch, results, idempotency, cancel, failures, admin retry. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';

let e: E2e;
let alice: string;
let bob: string;
let admin: string;
beforeAll(async () => {
  e = await startE2e();
  [alice, bob, admin] = await Promise.all([e.token('alice'), e.token('bob'), e.token('root', { admin: true })]);
});
afterAll(async () => e.stop());

const feynman = (explanation = 'Plants turn light into chemical energy.') => ({ concept: 'Photosynthesis', explanation });

describe('a job from creation to its result, over HTTP only', () => {
  it('creates each job type, runs it and serves what it produced to its owner only', async () => {
    const created = await Promise.all([
      e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: feynman() }),
      e.api('POST', '/api/ai/quiz-generations', { token: alice, body: { sourceText: 'ATP is made in mitochondria.', count: 2, difficulty: 'easy' } }),
      e.api('POST', '/api/ai/flashcard-generations', { token: alice, body: { sourceText: 'H2O is water. NaCl is salt.' } }),
    ]);
    for (const res of created) {
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ lifecycleStatus: 'queued', progress: 0 });
    }
    const done = await Promise.all(created.map((res) => e.waitForTerminal(res.body.jobId, alice)));
    for (const job of done) {
      expect(job).toMatchObject({ lifecycleStatus: 'succeeded', progress: 100 });
      expect(job.result.artifactCount).toBe(job.result.artifacts.length);
      expect(JSON.stringify(job)).not.toMatch(/internalErrorMessage|snapshot|outputHash|"output"/);
    }
    const [ev, quiz, cards] = done;
    expect((await e.api('GET', `/api/ai/feynman-evaluations/${ev.jobId}`, { token: alice })).status).toBe(200);
    expect((await e.api('GET', `/api/ai/quiz-generations/${quiz.jobId}`, { token: alice })).status).toBe(200);
    expect((await e.api('GET', `/api/ai/flashcard-generations/${cards.jobId}`, { token: alice })).status).toBe(200);
    const foreign = await e.api('GET', `/api/ai/quiz-generations/${quiz.jobId}`, { token: bob });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('JOB_NOT_FOUND');
    const list = await e.api('GET', '/api/ai/jobs?status=succeeded&limit=2', { token: alice });
    expect(list.body.items).toHaveLength(2);
    const next = await e.api('GET', `/api/ai/jobs?status=succeeded&limit=2&cursor=${list.body.nextCursor}`, { token: alice });
    expect(next.body.items).toHaveLength(1);
    expect((await e.api('GET', '/api/ai/jobs', { token: bob })).body.items).toEqual([]);
  });

  it('replays an idempotent create and refuses the key with another body', async () => {
    const headers = { 'idempotency-key': 'feynman-once' };
    const first = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: feynman(), headers });
    const again = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: feynman(), headers });
    expect(again.status).toBe(202);
    expect(again.body.jobId).toBe(first.body.jobId);
    const reused = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: feynman('something else'), headers });
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});

describe('cancel', () => {
  it('cancels a running job (its provider call hangs) and refuses to cancel it twice', async () => {
    const res = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: feynman('Explain it slowly [scenario:hang]') });
    const id = res.body.jobId;
    for (let i = 0; i < 200; i += 1) {
      if ((await e.api('GET', `/api/ai/jobs/${id}`, { token: alice })).body.lifecycleStatus === 'running') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const cancel = await e.api('POST', `/api/ai/jobs/${id}/cancel`, { token: alice });
    expect(cancel.status).toBe(202);
    const done = await e.waitForTerminal(id, alice);
    expect(done).toMatchObject({ lifecycleStatus: 'cancelled', errorCode: 'CANCELLED' });
    const twice = await e.api('POST', `/api/ai/jobs/${id}/cancel`, { token: alice });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('JOB_ALREADY_CANCELLED');
    const foreign = await e.api('POST', `/api/ai/jobs/${id}/cancel`, { token: bob });
    expect(foreign.status).toBe(404);
  });

  it('refuses to cancel a finished job', async () => {
    const res = await e.api('POST', '/api/ai/feynman-evaluations', { token: bob, body: feynman() });
    await e.waitForTerminal(res.body.jobId, bob);
    const cancel = await e.api('POST', `/api/ai/jobs/${res.body.jobId}/cancel`, { token: bob });
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.code).toBe('JOB_NOT_CANCELLABLE');
  });
});

describe('provider failures and admin retry', () => {
  it('ends a job failed with a public message for the user and detail for the admin; the admin retries it', async () => {
    const res = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: feynman('Please fail [scenario:unauthorized]') });
    const failed = await e.waitForTerminal(res.body.jobId, alice);
    expect(failed).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'CREDENTIAL_INVALID' });
    expect(failed.publicErrorMessage).toBeTruthy();
    expect(failed).not.toHaveProperty('internalErrorMessage');
    const detail = await e.api('GET', `/admin-api/ai/jobs/${failed.jobId}`, { token: admin });
    expect(detail.status).toBe(200);
    expect(detail.body.internalErrorMessage).toBeTruthy();
    expect(detail.body.transitions.length).toBeGreaterThanOrEqual(3);
    expect(detail.body.usage).toBeTruthy();
    expect((await e.api('GET', `/admin-api/ai/jobs/${failed.jobId}`, { token: alice })).status).toBe(403);

    const retry = await e.api('POST', `/admin-api/ai/jobs/${failed.jobId}/retry`, { token: admin });
    expect(retry.status).toBe(201);
    expect(retry.body.jobId).not.toBe(failed.jobId);
    const retried = await e.api('GET', `/admin-api/ai/jobs/${retry.body.jobId}`, { token: admin });
    expect(retried.body.parentJobId).toBe(failed.jobId);
    // The snapshot is copied: the retry meets the same scenario and fails the same way.
    expect(await e.waitForTerminal(retry.body.jobId, alice)).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'CREDENTIAL_INVALID' });

    const ok = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: feynman('fine') });
    await e.waitForTerminal(ok.body.jobId, alice);
    const notRetryable = await e.api('POST', `/admin-api/ai/jobs/${ok.body.jobId}/retry`, { token: admin });
    expect(notRetryable.status).toBe(409);
  });

  it('serves admin lists and stats', async () => {
    const list = await e.api('GET', '/admin-api/ai/jobs?userId=alice&limit=5', { token: admin });
    expect(list.status).toBe(200);
    expect(list.body.items.every((j: { userId: string }) => j.userId === 'alice')).toBe(true);
    const stats = await e.api('GET', '/admin-api/ai/stats', { token: admin });
    expect(stats.status).toBe(200);
    expect(stats.body.queues).toHaveLength(2);
    expect(stats.body.queues[0]).toHaveProperty('deadLetterQueue');
  });
});
