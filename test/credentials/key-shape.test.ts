import { beforeAll, describe, expect, it } from 'vitest';
import { createKmsClient } from '../../lib/credentials/aws-clients.ts';
import { CredentialKeyFormatError, UnsupportedKeyProviderError, type KeyFormatProblem } from '../../lib/credentials/errors.ts';
import { assertApiKeyShape, fingerprintOf } from '../../lib/credentials/key-shape.ts';
import { storeUserKey, type UserKeyProvider } from '../../lib/credentials/user-credential-repository.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { countRows } from '../helpers/db.ts';
import { createTestKmsKey, expectNoSecretIn, fakeDeepseekKey, recordRequests, rejectionOf } from './fixtures.ts';

const body = 'Zq7Wx2Lp9Rt4Vb6N';

const malformed: [string, string, KeyFormatProblem][] = [
  ['an empty key', '', 'empty'],
  ['a key longer than 512 characters', `sk-${'a'.repeat(510)}`, 'too_long'],
  ['a key shorter than 16 characters', 'sk-Zq7Wx2Lp9', 'too_short'],
  ['a key with a trailing newline', `sk-${body}\n`, 'invalid_characters'],
  ['a key with a leading space', ` sk-${body}`, 'invalid_characters'],
  ['a key with an inner tab', `sk-${body}\t${body}`, 'invalid_characters'],
  ['a key with non-ASCII characters', `sk-${body}é`, 'invalid_characters'],
  ['a key with a control character', `sk-${body}\u0000`, 'invalid_characters'],
];

describe('key shape', () => {
  it.each(malformed)('refuses %s with a typed error that does not quote it', (_, apiKey, problem) => {
    let caught: unknown;
    try {
      assertApiKeyShape(apiKey);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CredentialKeyFormatError);
    expect((caught as CredentialKeyFormatError).problem).toBe(problem);
    if (apiKey.length > 0) expectNoSecretIn(caught, apiKey.trim());
  });

  it('accepts provider-shaped keys at both length limits', () => {
    expect(() => assertApiKeyShape(fakeDeepseekKey())).not.toThrow();
    expect(() => assertApiKeyShape('a'.repeat(16))).not.toThrow();
    expect(() => assertApiKeyShape(`sk-${'b'.repeat(509)}`)).not.toThrow();
  });

  it('shows a scheme prefix only when the key has one, and stays within the column', () => {
    expect(fingerprintOf('user-a', `sk-${body}`)).toMatch(/^sk-…Vb6N sha256:[0-9a-f]{8}$/);
    expect(fingerprintOf('user-a', `${body}`)).toMatch(/^…Vb6N sha256:[0-9a-f]{8}$/);
    expect(fingerprintOf('user-a', `sk-${'b'.repeat(509)}`).length).toBeLessThanOrEqual(64);
  });
});

describe('storeUserKey validation', () => {
  let kmsKeyId: string;
  beforeAll(async () => {
    kmsKeyId = await createTestKmsKey();
  });

  it('refuses a malformed key before any KMS call or row', async () => {
    const kms = createKmsClient();
    const requests = recordRequests(kms);
    const apiKey = `sk-${body} `;
    const err = await rejectionOf(storeUserKey(getPrisma(), { userId: 'user-a', provider: 'deepseek', apiKey, kmsKeyId }, { kms }));
    expect(err).toBeInstanceOf(CredentialKeyFormatError);
    expectNoSecretIn(err, apiKey.trim());
    expect(requests.commands).toEqual([]);
    expect(await countRows('UserModelCredential')).toBe(0);
  });

  it('refuses a provider users cannot bring a key for', async () => {
    const provider = 'openai-compat' as UserKeyProvider;
    await expect(storeUserKey(getPrisma(), { userId: 'user-a', provider, apiKey: fakeDeepseekKey(), kmsKeyId }))
      .rejects.toBeInstanceOf(UnsupportedKeyProviderError);
    expect(await countRows('UserModelCredential')).toBe(0);
  });
});
