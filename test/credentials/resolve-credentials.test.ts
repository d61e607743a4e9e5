import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_SECRET_ID_ENV, PlatformKeys } from '../../lib/credentials/platform-keys.ts';
import { resolveCredentials } from '../../lib/credentials/resolve-credentials.ts';
import { revokeUserKey, storeUserKey } from '../../lib/credentials/user-credential-repository.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { CredentialInvalidError } from '../../lib/jobs/failures.ts';
import { createTestKmsKey, createTestSecret, expectNoSecretIn, fakeDeepseekKey, rejectionOf } from './fixtures.ts';

describe('resolveCredentials', () => {
  const platformDeepseek = fakeDeepseekKey();
  const previousSecretId = process.env[PLATFORM_SECRET_ID_ENV];
  let kmsKeyId: string;

  beforeAll(async () => {
    kmsKeyId = await createTestKmsKey();
    // The process-wide cache reads this on first use; no test in this file uses it before.
    process.env[PLATFORM_SECRET_ID_ENV] = await createTestSecret({ deepseek: platformDeepseek });
  });
  afterAll(() => {
    if (previousSecretId === undefined) delete process.env[PLATFORM_SECRET_ID_ENV];
    else process.env[PLATFORM_SECRET_ID_ENV] = previousSecretId;
  });

  it('gives a platform_key job the platform\'s keys from the configured secret', async () => {
    const set = await resolveCredentials({ userId: 'user-a', credentialMode: 'platform_key', credentialId: null });
    expect(set.mode).toBe('platform_key');
    expect(set.keyFor('deepseek')).toBe(platformDeepseek);
  });

  it('gives a user_deepseek_key job its owner\'s key, never the platform\'s', async () => {
    const apiKey = fakeDeepseekKey();
    const { id } = await storeUserKey(getPrisma(), { userId: 'user-a', provider: 'deepseek', apiKey, kmsKeyId });
    for (const credentialId of [id, null]) {
      const set = await resolveCredentials({ userId: 'user-a', credentialMode: 'user_deepseek_key', credentialId });
      expect(set).toMatchObject({ mode: 'user_deepseek_key', credentialId: id });
      expect(set.keyFor('deepseek')).toBe(apiKey);
    }
  });

  it('fails a user_deepseek_key job whose key was revoked, without falling back to the platform', async () => {
    const apiKey = fakeDeepseekKey();
    const { id } = await storeUserKey(getPrisma(), { userId: 'user-a', provider: 'deepseek', apiKey, kmsKeyId });
    await revokeUserKey(getPrisma(), 'user-a', 'deepseek');
    const err = await rejectionOf(resolveCredentials({ userId: 'user-a', credentialMode: 'user_deepseek_key', credentialId: id }));
    expect(err).toBeInstanceOf(CredentialInvalidError);
    expectNoSecretIn(err, apiKey);
    expectNoSecretIn(err, platformDeepseek);
  });

  it('uses injected platform keys when given', async () => {
    const keys = new PlatformKeys([['deepseek', 'sk-injected-0123456789']]);
    const set = await resolveCredentials({ userId: 'user-a', credentialMode: 'platform_key' }, { platformKeys: async () => keys });
    expect(set.keyFor('deepseek')).toBe('sk-injected-0123456789');
  });
});
