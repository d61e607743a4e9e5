import { DecryptCommand, InvalidCiphertextException } from '@aws-sdk/client-kms';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKmsClient } from '../../lib/credentials/aws-clients.ts';
import { encryptionContextFor, openSecret, sealSecret } from '../../lib/credentials/envelope.ts';
import { EnvelopeDecryptionError, EnvelopeEncryptionError } from '../../lib/credentials/errors.ts';
import { createTestKmsKey, expectNoSecretIn, fakeDeepseekKey, recordRequests, rejectionOf } from './fixtures.ts';

const owner = { userId: 'user-a', provider: 'deepseek' };

describe('KMS envelope', () => {
  let kmsKeyId: string;
  beforeAll(async () => {
    kmsKeyId = await createTestKmsKey();
  });

  it('seals with an AES_256 data key under the owner\'s encryption context, and opens again', async () => {
    const kms = createKmsClient();
    const requests = recordRequests(kms);
    const secret = fakeDeepseekKey();
    const sealed = await sealSecret(kms, kmsKeyId, secret, owner);
    expect(sealed.iv).toHaveLength(12);
    expect(sealed.authTag).toHaveLength(16);
    expect(sealed.keyCiphertext).toHaveLength(Buffer.byteLength(secret));
    expect(Buffer.from(sealed.keyCiphertext).toString('utf8')).not.toBe(secret);
    expect(await openSecret(kms, sealed, owner)).toBe(secret);
    expect(requests.commands).toEqual(['GenerateDataKeyCommand', 'DecryptCommand']);
  });

  it('uses a new IV and data key for every seal of the same secret', async () => {
    const kms = createKmsClient();
    const secret = fakeDeepseekKey();
    const [a, b] = await Promise.all([sealSecret(kms, kmsKeyId, secret, owner), sealSecret(kms, kmsKeyId, secret, owner)]);
    expect(Buffer.from(a!.iv).equals(Buffer.from(b!.iv))).toBe(false);
    expect(Buffer.from(a!.dataKeyCiphertext).equals(Buffer.from(b!.dataKeyCiphertext))).toBe(false);
    expect(Buffer.from(a!.keyCiphertext).equals(Buffer.from(b!.keyCiphertext))).toBe(false);
  });

  it('zeroes the plaintext data keys KMS returned once they have been used', async () => {
    const kms = createKmsClient();
    const requests = recordRequests(kms);
    const sealed = await sealSecret(kms, kmsKeyId, fakeDeepseekKey(), owner);
    await openSecret(kms, sealed, owner);
    const dataKeys = requests.outputs.map((o) => o.Plaintext as Uint8Array);
    expect(dataKeys).toHaveLength(2);
    for (const key of dataKeys) {
      expect(key).toHaveLength(32);
      expect(key.every((byte) => byte === 0)).toBe(true);
    }
  });

  it('makes KMS itself refuse the data key under another owner\'s context', async () => {
    const kms = createKmsClient();
    const sealed = await sealSecret(kms, kmsKeyId, fakeDeepseekKey(), owner);
    for (const other of [{ ...owner, userId: 'user-b' }, { ...owner, provider: 'openai-compat' }]) {
      await expect(kms.send(new DecryptCommand({ CiphertextBlob: sealed.dataKeyCiphertext, EncryptionContext: encryptionContextFor(other) })))
        .rejects.toBeInstanceOf(InvalidCiphertextException);
      const err = await rejectionOf(openSecret(kms, sealed, other));
      expect(err).toBeInstanceOf(EnvelopeDecryptionError);
    }
    await expect(kms.send(new DecryptCommand({ CiphertextBlob: sealed.dataKeyCiphertext })))
      .rejects.toBeInstanceOf(InvalidCiphertextException);
  });

  it('refuses to seal under an unknown KMS key, permanently and without the secret in the error', async () => {
    const secret = fakeDeepseekKey();
    const err = await rejectionOf(sealSecret(createKmsClient(), 'alias/does-not-exist', secret, owner));
    expect(err).toBeInstanceOf(EnvelopeEncryptionError);
    expect((err as EnvelopeEncryptionError).retryable).toBe(false);
    expectNoSecretIn(err, secret);
  });
});
