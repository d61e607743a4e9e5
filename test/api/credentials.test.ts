import { setUpApiEnvironment } from './api-env.ts';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handler as userHandler } from '../../functions/api-user.ts';
import { createUserApiHandler } from '../../lib/api/user-api.ts';
import { MAX_KEY_WRITES_PER_HOUR } from '../../lib/api/user-operations.ts';
import { credentialResponseSchema } from '../../lib/api/response-schemas.ts';
import { createKmsClient } from '../../lib/credentials/aws-clients.ts';
import { getActiveUserKeyInfo } from '../../lib/credentials/user-credential-repository.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { countRows } from '../helpers/db.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';
import { deadEndpointEnv, fakeDeepseekKey } from '../credentials/fixtures.ts';

let kmsKeyId: string;
beforeAll(async () => {
  ({ kmsKeyId } = await setUpApiEnvironment());
});
afterEach(() => {
  process.env.CREDENTIALS_KMS_KEY_ID = kmsKeyId;
});

const ROUTE = '/api/ai/credentials/deepseek';

function put(body: unknown, handler = userHandler, sub = 'user-1') {
  return invoke(handler, apiEvent(`PUT ${ROUTE}`, { claims: userClaims(sub), body }));
}

function send(method: 'GET' | 'DELETE', sub = 'user-1') {
  return invoke(userHandler, apiEvent(`${method} ${ROUTE}`, { claims: userClaims(sub) }));
}

describe('PUT/GET/DELETE /api/ai/credentials/deepseek', () => {
  it('stores the key encrypted and answers with provider, fingerprint and time only', async () => {
    const apiKey = fakeDeepseekKey();
    const res = await put({ apiKey });
    expect(res.status).toBe(200);
    expect(credentialResponseSchema.parse(res.body)).toEqual(res.body);
    expect(res.body.provider).toBe('deepseek');
    expect(res.raw).not.toContain(apiKey);
    const info = await getActiveUserKeyInfo(getPrisma(), 'user-1', 'deepseek');
    expect(info?.fingerprint).toBe(res.body.fingerprint);
    const [row] = await getPrisma().userModelCredential.findMany({ where: { userId: 'user-1' } });
    expect(Buffer.from(row!.keyCiphertext).toString('utf8')).not.toContain(apiKey);
  });

  it('replaces the previous key: one active row, the newest', async () => {
    await put({ apiKey: fakeDeepseekKey() });
    const second = await put({ apiKey: fakeDeepseekKey() });
    expect(await countRows('UserModelCredential', "userId = ? AND status = 'active'", ['user-1'])).toBe(1);
    expect((await send('GET')).body.fingerprint).toBe(second.body.fingerprint);
  });

  it('GET shows the active key\'s fingerprint, or 404 CREDENTIAL_NOT_FOUND; never another user\'s', async () => {
    expect((await send('GET')).status).toBe(404);
    const stored = await put({ apiKey: fakeDeepseekKey() }, userHandler, 'user-2');
    expect((await send('GET', 'user-1')).body.error.code).toBe('CREDENTIAL_NOT_FOUND');
    expect((await send('GET', 'user-2')).body).toEqual(stored.body);
  });

  it('DELETE revokes the key (204), then answers 404 CREDENTIAL_NOT_FOUND', async () => {
    await put({ apiKey: fakeDeepseekKey() });
    const first = await send('DELETE');
    expect(first.status).toBe(204);
    expect(first.raw).toBe('');
    expect(await countRows('UserModelCredential', "status = 'revoked'")).toBe(1);
    const second = await send('DELETE');
    expect(second.status).toBe(404);
    expect(second.body.error.code).toBe('CREDENTIAL_NOT_FOUND');
  });

  it.each([
    [{ apiKey: fakeDeepseekKey(), provider: 'openai' }, 'body'],
    [{}, 'body.apiKey'],
    [{ apiKey: 42 }, 'body.apiKey'],
    [{ apiKey: 'not a key with spaces' }, 'body.apiKey'],
  ])('rejects %o with 400 VALIDATION_FAILED on %s and stores nothing', async (body, path) => {
    const res = await put(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(await countRows('UserModelCredential')).toBe(0);
  });

  it('refuses an 11th key store within the hour with 429 TOO_MANY_KEY_WRITES, before KMS, for that user only', async () => {
    // Two stores from over an hour ago do not count.
    const hourAgo = new Date(Date.now() - 61 * 60_000);
    await put({ apiKey: fakeDeepseekKey() });
    await getPrisma().userModelCredential.updateMany({ where: { userId: 'user-1' }, data: { createdAt: hourAgo } });
    for (let i = 0; i < MAX_KEY_WRITES_PER_HOUR; i += 1) expect((await put({ apiKey: fakeDeepseekKey() })).status, `store ${i + 1}`).toBe(200);
    const active = await send('GET');
    const rows = await countRows('UserModelCredential', 'userId = ?', ['user-1']);
    // Past the limit: refused before KMS is asked (no KMS key is configured now: reaching KMS would be a 500).
    delete process.env.CREDENTIALS_KMS_KEY_ID;
    const refused = await put({ apiKey: fakeDeepseekKey() });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('TOO_MANY_KEY_WRITES');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3_500);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    expect(await countRows('UserModelCredential', 'userId = ?', ['user-1'])).toBe(rows);
    expect((await send('GET')).body.fingerprint).toBe(active.body.fingerprint);
    process.env.CREDENTIALS_KMS_KEY_ID = kmsKeyId;
    expect((await put({ apiKey: fakeDeepseekKey() }, userHandler, 'user-2')).status).toBe(200);
  });

  it('says to retry once the hour holds fewer stores than the limit, even when concurrent stores went past it', async () => {
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
    // 12 stores in the hour (two over, as concurrent stores at the edge can leave): free again once the third
    // oldest, 30 minutes old, leaves the hour.
    await getPrisma().userModelCredential.createMany({
      data: [50, 40, 30, 20, 10, 9, 8, 7, 6, 5, 4, 3].map((m, i) => ({
        id: `01J00000000000000000000${String(i).padStart(3, '0')}`, userId: 'user-edge', provider: 'deepseek', keyCiphertext: new Uint8Array([1]),
        dataKeyCiphertext: new Uint8Array([2]), iv: new Uint8Array(12), authTag: new Uint8Array(16), kmsKeyId: 'alias/test', fingerprint: 'fp',
        status: 'revoked' as const, createdAt: minutesAgo(m),
      })),
    });
    const refused = await put({ apiKey: fakeDeepseekKey() }, userHandler, 'user-edge');
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(29 * 60);
    expect(retryAfter).toBeLessThanOrEqual(30 * 60);
  });

  it('answers 503 PLATFORM_UNAVAILABLE with Retry-After when KMS cannot be reached, without the key in the body', async () => {
    const apiKey = fakeDeepseekKey();
    const handler = createUserApiHandler({ kms: createKmsClient(await deadEndpointEnv(), { maxAttempts: 1 }) });
    const res = await put({ apiKey }, handler);
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('PLATFORM_UNAVAILABLE');
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.raw).not.toContain(apiKey);
    expect(await countRows('UserModelCredential')).toBe(0);
  });

  it('answers 500 INTERNAL with no detail when the KMS key is not configured', async () => {
    delete process.env.CREDENTIALS_KMS_KEY_ID;
    const res = await put({ apiKey: fakeDeepseekKey() });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'INTERNAL', message: 'Internal server error' } });
  });
});

describe("jobs of a user who stored a key", () => {
  it("run on the user's own key (mode and key id recorded); other users' jobs run on the platform's keys", async () => {
    expect((await put({ apiKey: fakeDeepseekKey() })).status).toBe(200);
    const stored = await getActiveUserKeyInfo(getPrisma(), 'user-1', 'deepseek');
    const body = { concept: 'Entropy', explanation: 'Disorder tends to increase.' };
    const mine = await invoke(userHandler, apiEvent('POST /api/ai/feynman-evaluations', { claims: userClaims('user-1'), body }));
    const theirs = await invoke(userHandler, apiEvent('POST /api/ai/feynman-evaluations', { claims: userClaims('user-2'), body }));
    expect(mine.status).toBe(202);
    const jobs = getPrisma().aiJob;
    expect(await jobs.findUniqueOrThrow({ where: { id: mine.body.jobId } })).toMatchObject({ credentialMode: 'user_deepseek_key', credentialId: stored?.id });
    expect(await jobs.findUniqueOrThrow({ where: { id: theirs.body.jobId } })).toMatchObject({ credentialMode: 'platform_key', credentialId: null });
  });
});
