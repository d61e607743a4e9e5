/** Authorization matrix and public error codes, over HTTP against the local runtime. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';

let e: E2e;
beforeAll(async () => {
  e = await startE2e();
});
afterAll(async () => e.stop());

const body = { concept: 'Gravity', explanation: 'Mass attracts mass.' };

describe('authorization matrix', () => {
  it('401 without a valid token: none, expired, wrong issuer, wrong audience, forged signature', async () => {
    const forged = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256' }).setIssuer(e.runtime.audience.issuer)
      .setAudience(e.runtime.audience.audience).setExpirationTime('1h').sign(new Uint8Array(32).fill(7));
    const cases: Record<string, string | undefined> = {
      none: undefined,
      expired: await e.token('alice', { expiresIn: -60 }),
      'wrong issuer': await e.token('alice', { issuer: 'https://evil.example' }),
      'wrong audience': await e.token('alice', { audience: 'another-api' }),
      forged,
      garbage: 'not.a.jwt',
    };
    for (const [name, token] of Object.entries(cases)) {
      for (const [method, path] of [['GET', '/api/ai/jobs'], ['POST', '/api/ai/feynman-evaluations'], ['GET', '/admin-api/ai/stats']] as const) {
        const res = await e.api(method, path, { ...(token ? { token } : {}), ...(method === 'POST' ? { body } : {}) });
        expect(res.status, `${name} ${method} ${path}`).toBe(401);
      }
    }
  });

  it("owner sees the job, another user gets 404 (never 403), admins use admin routes, users get 403 there", async () => {
    const [alice, bob, admin] = await Promise.all([e.token('alice'), e.token('bob'), e.token('root', { admin: true })]);
    const created = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body });
    const id = created.body.jobId;
    expect((await e.api('GET', `/api/ai/jobs/${id}`, { token: alice })).status).toBe(200);
    const other = await e.api('GET', `/api/ai/jobs/${id}`, { token: bob });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ error: { code: 'JOB_NOT_FOUND', message: expect.any(String) } });
    expect((await e.api('GET', `/admin-api/ai/jobs/${id}`, { token: admin })).status).toBe(200);
    for (const [method, path] of [['GET', '/admin-api/ai/jobs'], ['GET', `/admin-api/ai/jobs/${id}`], ['POST', `/admin-api/ai/jobs/${id}/retry`], ['GET', '/admin-api/ai/stats']] as const) {
      const res = await e.api(method, path, { token: alice });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
  });
});

describe('bad input is refused with a precise code', () => {
  it('400 VALIDATION_FAILED with field paths, unknown fields and bad ids', async () => {
    const alice = await e.token('alice');
    const missing = await e.api('POST', '/api/ai/quiz-generations', { token: alice, body: { sourceText: 'x', count: 99, difficulty: 'extreme' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('VALIDATION_FAILED');
    expect(JSON.stringify(missing.body)).toMatch(/count/);
    const unknown = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: { ...body, extra: true } });
    expect(unknown.status).toBe(400);
    const badJson = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, rawBody: '{"concept":' });
    expect(badJson.status).toBe(400);
    const badId = await e.api('GET', '/api/ai/jobs/not-a-ulid', { token: alice });
    expect(badId.status).toBe(400);
    const huge = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: { concept: 'x', explanation: 'y'.repeat(200_000) } });
    expect(huge.status).toBe(413);
  });

  it('unknown routes are 404 and nothing leaks from a 500', async () => {
    const alice = await e.token('alice');
    expect((await e.api('POST', '/api/ai/jobs', { token: alice, body: {} })).status).toBe(404);
  });
});

describe('limits', () => {
  it('429 TOO_MANY_JOBS past the active-job limit, with Retry-After', async () => {
    const carol = await e.token('carol');
    const slow = { concept: 'Slow', explanation: 'wait [scenario:hang]' };
    const statuses: number[] = [];
    let limited;
    for (let i = 0; i < 6; i += 1) {
      const res = await e.api('POST', '/api/ai/feynman-evaluations', { token: carol, body: { ...slow, explanation: `${slow.explanation} ${i}` } });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.slice(0, 5)).toEqual([202, 202, 202, 202, 202]);
    expect(limited?.body.error.code).toBe('TOO_MANY_JOBS');
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThan(0);
    // Clean up: cancel the hanging jobs so the runtime stops cleanly.
    const list = await e.api('GET', '/api/ai/jobs?limit=10', { token: carol });
    await Promise.all(list.body.items.map((j: { jobId: string }) => e.api('POST', `/api/ai/jobs/${j.jobId}/cancel`, { token: carol })));
    await Promise.all(list.body.items.map((j: { jobId: string }) => e.waitForTerminal(j.jobId, carol)));
  });
});

describe('daily quota', () => {
  it('429 QUOTA_EXCEEDED once the day\'s quota is used, with Retry-After until midnight UTC', async () => {
    const erin = await e.token('erin');
    // 200 finished jobs earlier today (seeded directly: creating them over HTTP is the load test's job).
    const { insertJob } = await import('../helpers/factories.ts');
    for (let i = 0; i < 200; i += 1) await insertJob({ userId: 'erin', jobType: 'feynman_evaluation', lifecycleStatus: 'succeeded' });
    const res = await e.api('POST', '/api/ai/feynman-evaluations', { token: erin, body });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('QUOTA_EXCEEDED');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
  });
});

describe('user credentials', () => {
  it('stores a DeepSeek key encrypted, shows only a fingerprint, revokes it', async () => {
    const dave = await e.token('dave');
    const key = 'sk-e2etestkey0123456789abcdefXYZ9';
    const put = await e.api('PUT', '/api/ai/credentials/deepseek', { token: dave, body: { apiKey: key } });
    expect(put.status).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain(key);
    expect(put.body.fingerprint).toBeTruthy();
    expect((await e.api('GET', '/api/ai/credentials/deepseek', { token: dave })).body.fingerprint).toBe(put.body.fingerprint);
    expect((await e.api('DELETE', '/api/ai/credentials/deepseek', { token: dave })).status).toBe(204);
    expect((await e.api('DELETE', '/api/ai/credentials/deepseek', { token: dave })).status).toBe(404);
  });
});
