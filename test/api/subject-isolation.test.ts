/**
 * JWT subjects are user ids, and user ids compare exactly: subjects that differ only in case or accents are
 * different users. Under the tables' default collation (utf8mb4_unicode_ci) they were one user to MySQL, so
 * `learner-1` replayed `Learner-1`'s idempotency key, read their jobs and ran on their stored provider key.
 * Migration 20261130000000_exact_identifiers fixed it; these tests hold it through the real handlers.
 */
import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as userHandler } from '../../functions/api-user.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { countRows } from '../helpers/db.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';
import { fakeDeepseekKey } from '../credentials/fixtures.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

const OWNER = 'Learner-1';
const LOOKALIKES = ['learner-1', 'LEARNER-1', 'Léarner-1'];
const CREATE = 'POST /api/ai/feynman-evaluations';
const body = { concept: 'Entropy', explanation: 'Disorder tends to increase.' };

function create(sub: string, key?: string) {
  return invoke(userHandler, apiEvent(CREATE, { claims: userClaims(sub), body, headers: key ? { 'Idempotency-Key': key } : {} }));
}

describe('subjects that differ only in case or accents are different users', () => {
  it.each(LOOKALIKES)('%s with the owner\'s Idempotency-Key gets a job of their own, not a replay', async (sub) => {
    const owners = await create(OWNER, 'same-key');
    const theirs = await create(sub, 'same-key');
    expect(theirs.status).toBe(202);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.jobId).not.toBe(owners.body.jobId);
    expect(await getPrisma().aiJob.findUniqueOrThrow({ where: { id: theirs.body.jobId } })).toMatchObject({ userId: sub });
    expect(await countRows('AiJob')).toBe(2);
  });

  it.each(LOOKALIKES)('%s cannot read, list or cancel the owner\'s job', async (sub) => {
    const owners = await create(OWNER);
    const jobId = owners.body.jobId as string;
    const read = await invoke(userHandler, apiEvent('GET /api/ai/jobs/{jobId}', { claims: userClaims(sub), pathParameters: { jobId } }));
    expect(read.status).toBe(404);
    const listed = await invoke(userHandler, apiEvent('GET /api/ai/jobs', { claims: userClaims(sub) }));
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([]);
    const cancel = await invoke(userHandler, apiEvent('POST /api/ai/jobs/{jobId}/cancel', { claims: userClaims(sub), pathParameters: { jobId } }));
    expect(cancel.status).toBe(404);
    const own = await invoke(userHandler, apiEvent('GET /api/ai/jobs/{jobId}', { claims: userClaims(OWNER), pathParameters: { jobId } }));
    expect(own.status).toBe(200);
  });

  it.each(LOOKALIKES)('%s neither sees nor runs on the owner\'s stored provider key', async (sub) => {
    const stored = await invoke(userHandler, apiEvent('PUT /api/ai/credentials/deepseek', { claims: userClaims(OWNER), body: { apiKey: fakeDeepseekKey() } }));
    expect(stored.status).toBe(200);
    const seen = await invoke(userHandler, apiEvent('GET /api/ai/credentials/deepseek', { claims: userClaims(sub) }));
    expect(seen.status).toBe(404);
    const theirs = await create(sub);
    expect(await getPrisma().aiJob.findUniqueOrThrow({ where: { id: theirs.body.jobId } }))
      .toMatchObject({ credentialMode: 'platform_key', credentialId: null });
    const owners = await create(OWNER);
    expect(await getPrisma().aiJob.findUniqueOrThrow({ where: { id: owners.body.jobId } }))
      .toMatchObject({ credentialMode: 'user_deepseek_key' });
  });

  it('Idempotency-Keys that differ only in case are different keys (base64 keys are case-sensitive)', async () => {
    const first = await create(OWNER, 'aGVsbG8');
    const second = await create(OWNER, 'AGVSBG8');
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body.jobId).not.toBe(first.body.jobId);
    const replay = await create(OWNER, 'aGVsbG8');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.jobId).toBe(first.body.jobId);
  });
});
