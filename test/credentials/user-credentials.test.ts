import { createHash } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { CreateAliasCommand } from '@aws-sdk/client-kms';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKmsClient } from '../../lib/credentials/aws-clients.ts';
import { CredentialNotFoundError, CredentialServiceUnavailableError, EnvelopeDecryptionError } from '../../lib/credentials/errors.ts';
import {
  getActiveUserKeyInfo, resolveUserCredentialSet, revokeUserKey, storeUserKey,
} from '../../lib/credentials/user-credential-repository.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { CredentialInvalidError } from '../../lib/jobs/failures.ts';
import { countRows, rawDb } from '../helpers/db.ts';
import {
  createTestKmsKey, deadEndpointEnv, expectNoSecretIn, fakeDeepseekKey, rejectionOf, uniqueName,
} from './fixtures.ts';

let kmsKeyId: string;
beforeAll(async () => {
  kmsKeyId = await createTestKmsKey();
});

async function store(userId: string, apiKey = fakeDeepseekKey()) {
  const info = await storeUserKey(getPrisma(), { userId, provider: 'deepseek', apiKey, kmsKeyId });
  return { apiKey, info };
}

async function credentialRows(where = '1=1', params: unknown[] = []): Promise<mysql.RowDataPacket[]> {
  const [rows] = await (await rawDb()).query<mysql.RowDataPacket[]>(`SELECT * FROM UserModelCredential WHERE ${where}`, params);
  return rows;
}

/** Flips one bit of a VARBINARY column of the row (a tampered or corrupted blob). */
async function flipBit(id: string, column: 'keyCiphertext' | 'dataKeyCiphertext' | 'iv' | 'authTag'): Promise<void> {
  const [row] = await credentialRows('id = ?', [id]);
  const bytes = Buffer.from(row?.[column] as Buffer);
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0x01;
  await (await rawDb()).query(`UPDATE UserModelCredential SET \`${column}\` = ? WHERE id = ?`, [bytes, id]);
}

describe('storing and resolving a user key', () => {
  it('round trip: the stored key comes back from resolve, for deepseek only', async () => {
    const { apiKey, info } = await store('user-a');
    const set = await resolveUserCredentialSet(getPrisma(), { userId: 'user-a' });
    expect(set.mode).toBe('user_deepseek_key');
    expect(set.credentialId).toBe(info.id);
    expect(set.keyFor('deepseek')).toBe(apiKey);
    expect(set.keyFor('openai-compat')).toBeUndefined();
    expect(set.keyFor('mock')).toBeUndefined();
    expect(JSON.stringify(set)).not.toContain(apiKey);
  });

  it('returns only id, fingerprint and creation time from a store', async () => {
    const { info } = await store('user-a');
    expect(Object.keys(info).sort()).toEqual(['createdAt', 'fingerprint', 'id']);
    expect(info.createdAt).toBeInstanceOf(Date);
  });

  it('resolves a given credentialId when it is the user\'s active key', async () => {
    const { apiKey, info } = await store('user-a');
    const set = await resolveUserCredentialSet(getPrisma(), { userId: 'user-a', credentialId: info.id });
    expect(set.keyFor('deepseek')).toBe(apiKey);
  });

  it('keeps no plaintext in the row: no column holds the key as text, hex or base64', async () => {
    const { apiKey, info } = await store('user-a');
    const [row] = await credentialRows('id = ?', [info.id]);
    expect(row).toBeDefined();
    const needles = [apiKey, apiKey.slice(3), Buffer.from(apiKey).toString('hex'), Buffer.from(apiKey).toString('base64')]
      .map((s) => Buffer.from(s, 'utf8'));
    for (const [column, value] of Object.entries(row ?? {})) {
      const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value instanceof Date ? value.toISOString() : String(value), 'utf8');
      for (const needle of needles) expect(bytes.includes(needle), `column ${column}`).toBe(false);
    }
    expect((row?.iv as Buffer).length).toBe(12);
    expect((row?.authTag as Buffer).length).toBe(16);
    expect(row?.kmsKeyId).toBe(kmsKeyId);
  });

  it('fingerprints a key so its owner recognises it, without the key or a brute-forceable hash', async () => {
    const apiKey = fakeDeepseekKey();
    const { info } = await store('user-a', apiKey);
    expect(info.fingerprint).toMatch(/^sk-…[0-9a-f]{4} sha256:[0-9a-f]{8}$/);
    expect(info.fingerprint).toContain(`…${apiKey.slice(-4)}`);
    // Nothing of the secret part shows but its last 4 characters.
    for (let i = 0; i + 5 <= apiKey.length; i++) expect(info.fingerprint).not.toContain(apiKey.slice(i, i + 5));
    // The hash is 32 bits of a per-user salted digest, not a prefix of the key's plain SHA-256.
    const plainDigest = createHash('sha256').update(apiKey).digest('hex');
    expect(info.fingerprint).not.toContain(plainDigest.slice(0, 8));
    // Same key, same user: same fingerprint; another user storing the same key gets a different one.
    expect((await store('user-a', apiKey)).info.fingerprint).toBe(info.fingerprint);
    expect((await store('user-b', apiKey)).info.fingerprint).not.toBe(info.fingerprint);
  });

  it('stores the KMS key\'s ARN when sealed through an alias, and resolves through it', async () => {
    const alias = `alias/${uniqueName('credentials-test')}`;
    await createKmsClient().send(new CreateAliasCommand({ AliasName: alias, TargetKeyId: kmsKeyId }));
    const apiKey = fakeDeepseekKey();
    const info = await storeUserKey(getPrisma(), { userId: 'user-a', provider: 'deepseek', apiKey, kmsKeyId: alias });
    const [row] = await credentialRows('id = ?', [info.id]);
    expect(row?.kmsKeyId).toBe(kmsKeyId);
    expect((await resolveUserCredentialSet(getPrisma(), { userId: 'user-a' })).keyFor('deepseek')).toBe(apiKey);
  });
});

describe('one active key per user', () => {
  it('storing a new key revokes the previous one; exactly one stays active', async () => {
    const first = await store('user-a');
    const second = await store('user-a');
    await store('user-b');
    expect(await countRows('UserModelCredential', "userId = 'user-a' AND status = 'active'")).toBe(1);
    const [old] = await credentialRows('id = ?', [first.info.id]);
    expect(old?.status).toBe('revoked');
    expect(old?.revokedAt).toBeInstanceOf(Date);
    const set = await resolveUserCredentialSet(getPrisma(), { userId: 'user-a' });
    expect(set.keyFor('deepseek')).toBe(second.apiKey);
    expect(set.credentialId).toBe(second.info.id);
    expect(await countRows('UserModelCredential', "userId = 'user-b' AND status = 'active'")).toBe(1);
  });

  it('leaves exactly one active key after concurrent stores for the same user', async () => {
    const stored = await Promise.all(Array.from({ length: 4 }, () => store('user-a')));
    expect(await countRows('UserModelCredential', "userId = 'user-a' AND status = 'active'")).toBe(1);
    expect(await countRows('UserModelCredential', "userId = 'user-a'")).toBe(4);
    const set = await resolveUserCredentialSet(getPrisma(), { userId: 'user-a' });
    expect(stored.map((s) => s.apiKey)).toContain(set.keyFor('deepseek'));
  });

  it('reports the active key as fingerprint information only, or null', async () => {
    expect(await getActiveUserKeyInfo(getPrisma(), 'user-a', 'deepseek')).toBeNull();
    const { info } = await store('user-a');
    const active = await getActiveUserKeyInfo(getPrisma(), 'user-a', 'deepseek');
    expect(active).toEqual({ ...info, provider: 'deepseek' });
  });
});

describe('revocation', () => {
  it('revoke then resolve fails with CredentialInvalidError, by default and by id', async () => {
    const { apiKey, info } = await store('user-a');
    expect(await revokeUserKey(getPrisma(), 'user-a', 'deepseek')).toBe(1);
    expect(await getActiveUserKeyInfo(getPrisma(), 'user-a', 'deepseek')).toBeNull();
    for (const ref of [{ userId: 'user-a' }, { userId: 'user-a', credentialId: info.id }]) {
      const err = await rejectionOf(resolveUserCredentialSet(getPrisma(), ref));
      expect(err).toBeInstanceOf(CredentialInvalidError);
      expect((err as CredentialInvalidError).retryable).toBe(false);
      expectNoSecretIn(err, apiKey);
    }
  });

  it('revoking when nothing is active is a typed not-found, and changes nothing', async () => {
    await expect(revokeUserKey(getPrisma(), 'user-a', 'deepseek')).rejects.toBeInstanceOf(CredentialNotFoundError);
    await store('user-a');
    await revokeUserKey(getPrisma(), 'user-a', 'deepseek');
    await expect(revokeUserKey(getPrisma(), 'user-a', 'deepseek')).rejects.toBeInstanceOf(CredentialNotFoundError);
    expect(await countRows('UserModelCredential', "status = 'revoked'")).toBe(1);
  });
});

describe('refusing keys that are not the user\'s or not intact', () => {
  it('refuses another user\'s credentialId', async () => {
    const { apiKey, info } = await store('user-a');
    const err = await rejectionOf(resolveUserCredentialSet(getPrisma(), { userId: 'user-b', credentialId: info.id }));
    expect(err).toBeInstanceOf(CredentialInvalidError);
    expectNoSecretIn(err, apiKey);
  });

  it('refuses an unknown credentialId and a user without any key', async () => {
    await expect(resolveUserCredentialSet(getPrisma(), { userId: 'user-a', credentialId: newId() }))
      .rejects.toBeInstanceOf(CredentialInvalidError);
    await expect(resolveUserCredentialSet(getPrisma(), { userId: 'user-a' })).rejects.toBeInstanceOf(CredentialInvalidError);
  });

  it.each(['keyCiphertext', 'authTag', 'iv', 'dataKeyCiphertext'] as const)('refuses a row whose %s was tampered with', async (column) => {
    const { apiKey, info } = await store('user-a');
    await flipBit(info.id, column);
    const err = await rejectionOf(resolveUserCredentialSet(getPrisma(), { userId: 'user-a' }));
    expect(err).toBeInstanceOf(CredentialInvalidError);
    expect((err as Error).cause).toBeInstanceOf(EnvelopeDecryptionError);
    expect((err as CredentialInvalidError).publicMessage).toBe('The AI credential is invalid or was revoked');
    expectNoSecretIn(err, apiKey);
  });

  it('binds the ciphertext to its owner: the row\'s blobs copied to another user do not decrypt', async () => {
    const { apiKey, info } = await store('user-a');
    const copyId = newId();
    await (await rawDb()).query(
      `INSERT INTO UserModelCredential (id, userId, provider, keyCiphertext, dataKeyCiphertext, iv, authTag, kmsKeyId, fingerprint, status, createdAt, updatedAt)
       SELECT ?, 'user-b', provider, keyCiphertext, dataKeyCiphertext, iv, authTag, kmsKeyId, fingerprint, 'active', NOW(3), NOW(3)
       FROM UserModelCredential WHERE id = ?`,
      [copyId, info.id],
    );
    for (const ref of [{ userId: 'user-b' }, { userId: 'user-b', credentialId: copyId }]) {
      const err = await rejectionOf(resolveUserCredentialSet(getPrisma(), ref));
      expect(err).toBeInstanceOf(CredentialInvalidError);
      // KMS itself refused: the encryption context names user-a.
      expect((err as Error).message).toContain('InvalidCiphertextException');
      expectNoSecretIn(err, apiKey);
    }
    // The original still opens for its owner.
    expect((await resolveUserCredentialSet(getPrisma(), { userId: 'user-a' })).keyFor('deepseek')).toBe(apiKey);
  });

  it('reports an unreachable KMS as retryable, not as an invalid credential', async () => {
    const { apiKey } = await store('user-a');
    const kms = createKmsClient(await deadEndpointEnv(), { maxAttempts: 1 });
    const err = await rejectionOf(resolveUserCredentialSet(getPrisma(), { userId: 'user-a' }, { kms }));
    expect(err).toBeInstanceOf(CredentialServiceUnavailableError);
    expect((err as CredentialServiceUnavailableError).retryable).toBe(true);
    expectNoSecretIn(err, apiKey);
  });
});
