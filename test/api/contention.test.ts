/**
 * Concurrency never answers 500: storms of concurrent writes on one row set — credential PUT/DELETE, cancel,
 * admin retry, creation — against real MariaDB. Deadlock victims are retried a bounded number of times; what
 * still conflicts answers 503 PLATFORM_UNAVAILABLE with Retry-After. Every outcome is a documented status, and
 * the data stays consistent (one active key, one cancellation, one retry child, one job per idempotency key).
 */
import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as adminHandler } from '../../functions/api-admin.ts';
import { handler as userHandler } from '../../functions/api-user.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { fakeDeepseekKey } from '../credentials/fixtures.ts';
import { countRows } from '../helpers/db.ts';
import { adminClaims, apiEvent, invoke, userClaims, type ApiResponse } from '../helpers/api-events.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

/** Every response is one of `allowed`; a 503 is the documented PLATFORM_UNAVAILABLE with Retry-After. */
function expectOnly(responses: ApiResponse[], allowed: number[]): void {
  const statuses = responses.map((r) => r.status);
  expect(statuses.filter((s) => !allowed.includes(s) && s !== 503), JSON.stringify(responses.filter((r) => r.status >= 500).map((r) => r.body))).toEqual([]);
  for (const r of responses.filter((x) => x.status === 503)) {
    expect(r.body).toEqual({ error: { code: 'PLATFORM_UNAVAILABLE', message: expect.any(String) } });
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
  }
}

const feynman = { concept: 'Gravity', explanation: 'Mass attracts mass.' };

async function createJobVia(sub: string): Promise<string> {
  const res = await invoke(userHandler, apiEvent('POST /api/ai/feynman-evaluations', { claims: userClaims(sub), body: feynman }));
  expect(res.status).toBe(202);
  return res.body.jobId as string;
}

describe('write storms', () => {
  it('concurrent PUT and DELETE of one user\'s key: 200/204/404, 429 past the hourly key writes, or 503, never 500; at most one key stays active', async () => {
    const route = '/api/ai/credentials/deepseek';
    const requests = Array.from({ length: 24 }, (_, i) => i % 2 === 0
      ? invoke(userHandler, apiEvent(`PUT ${route}`, { claims: userClaims('storm-cred'), body: { apiKey: fakeDeepseekKey() } }))
      : invoke(userHandler, apiEvent(`DELETE ${route}`, { claims: userClaims('storm-cred') })));
    const responses = await Promise.all(requests);
    expectOnly(responses, [200, 204, 404, 429]);
    expect(await countRows('UserModelCredential', "userId = 'storm-cred' AND status = 'active'")).toBeLessThanOrEqual(1);
  });

  it('concurrent cancels of the same jobs: one 200 per job, the rest 409 (or 503), never 500', async () => {
    const jobs = await Promise.all(Array.from({ length: 4 }, () => createJobVia('storm-cancel')));
    const responses = await Promise.all(jobs.flatMap((jobId) => Array.from({ length: 6 }, () =>
      invoke(userHandler, apiEvent('POST /api/ai/jobs/{jobId}/cancel', { claims: userClaims('storm-cancel'), pathParameters: { jobId } })))));
    expectOnly(responses, [200, 202, 409]);
    expect(await countRows('AiJob', "userId = 'storm-cancel' AND lifecycleStatus = 'cancelled'")).toBe(jobs.length);
    expect(await countRows('AiJobTransition', "toStatus = 'cancelled'")).toBe(jobs.length);
  });

  it('concurrent admin retries of the same failed jobs: 201 then 200 (or 503), one child per parent', async () => {
    const parents = await Promise.all(Array.from({ length: 3 }, () => createJobVia('storm-retry')));
    await getPrisma().aiJob.updateMany({ where: { id: { in: parents } }, data: { lifecycleStatus: 'failed', finishedAt: new Date() } });
    const responses = await Promise.all(parents.flatMap((jobId) => Array.from({ length: 6 }, () =>
      invoke(adminHandler, apiEvent('POST /admin-api/ai/jobs/{jobId}/retry', { claims: adminClaims(), pathParameters: { jobId } })))));
    expectOnly(responses, [200, 201]);
    for (const parent of parents) expect(await countRows('AiJob', 'parentJobId = ?', [parent])).toBe(1);
  });

  it('concurrent creates, with and without idempotency keys: 202/429 (or 503), one job per key', async () => {
    const keys = ['k-1', 'k-2', 'k-3'];
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => invoke(userHandler, apiEvent('POST /api/ai/quiz-generations', {
      claims: userClaims(`storm-create-${i % 2}`),
      headers: i % 3 === 0 ? {} : { 'idempotency-key': keys[i % keys.length]! },
      body: { sourceText: 'Mitochondria make ATP.', count: 2, difficulty: 'easy' },
    }))));
    expectOnly(responses, [202, 429]);
    for (const user of ['storm-create-0', 'storm-create-1']) {
      for (const key of keys) expect(await countRows('AiJob', 'userId = ? AND idempotencyKey = ?', [user, key])).toBeLessThanOrEqual(1);
    }
  });
});
