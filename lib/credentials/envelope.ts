/**
 * KMS envelope encryption of one small secret (a user's provider API key).
 *
 * Sealing: KMS `GenerateDataKey` (AES_256) under the configured KMS key returns a fresh 256-bit data key in
 * plaintext and wrapped (`CiphertextBlob`); the secret is encrypted locally with AES-256-GCM under the plaintext
 * data key with a random 12-byte IV; only the wrapped data key, the ciphertext, the IV and the 16-byte tag are
 * kept. Opening: KMS `Decrypt` unwraps the data key, AES-GCM decrypts and authenticates.
 *
 * Binding: both layers are bound to the owner. KMS receives the encryption context
 * `{ userId, provider, purpose: 'user-model-credential' }` (it must be repeated exactly to unwrap, and it is
 * recorded in CloudTrail), and the same context is the GCM additional authenticated data. A row whose blobs
 * are copied to another user, or another provider, does not open.
 *
 * Hygiene: the plaintext data key buffers and the decrypted secret's buffer are zeroed as soon as they have
 * been used. What cannot be zeroed from JavaScript: the JS string the caller receives, OpenSSL's copy inside
 * the cipher object, and the SDK's decoded response body; they live until garbage collection.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { isTransientAwsError } from './aws-clients.ts';
import {
  CredentialServiceUnavailableError,
  EnvelopeDecryptionError,
  EnvelopeEncryptionError,
} from './errors.ts';

/** The `purpose` entry of every encryption context made here. */
export const ENVELOPE_PURPOSE = 'user-model-credential';

const CIPHER = 'aes-256-gcm';
const DATA_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Whose secret this is; becomes the encryption context. */
export interface EnvelopeOwner {
  userId: string;
  provider: string;
}

/** What is stored: never the secret, never the plaintext data key. */
export interface SealedSecret {
  /** AES-256-GCM ciphertext of the secret (same length as its UTF-8 bytes). */
  keyCiphertext: Uint8Array;
  /** The data key wrapped by KMS (`CiphertextBlob`). */
  dataKeyCiphertext: Uint8Array;
  /** 12 random bytes, new for every seal. */
  iv: Uint8Array;
  /** The 16-byte GCM authentication tag. */
  authTag: Uint8Array;
  /** ARN of the KMS key that wrapped the data key (as KMS reported it, even if sealed via an alias). */
  kmsKeyId: string;
}

/** The KMS encryption context for `owner`; also, canonically serialised, the GCM additional data. */
export function encryptionContextFor(owner: EnvelopeOwner): Record<string, string> {
  return { userId: owner.userId, provider: owner.provider, purpose: ENVELOPE_PURPOSE };
}

function additionalData(context: Record<string, string>): Buffer {
  const sorted = Object.keys(context).sort().map((k) => [k, context[k]]);
  return Buffer.from(JSON.stringify(sorted), 'utf8');
}

/**
 * Encrypts `secret` for `owner` under the KMS key `kmsKeyId` (key id, ARN or alias).
 * @throws CredentialServiceUnavailableError when KMS is unreachable or throttling (retry later).
 * @throws EnvelopeEncryptionError when KMS refuses (unknown or disabled key, access denied).
 */
export async function sealSecret(kms: KMSClient, kmsKeyId: string, secret: string, owner: EnvelopeOwner): Promise<SealedSecret> {
  const context = encryptionContextFor(owner);
  const generated = await kms
    .send(new GenerateDataKeyCommand({ KeyId: kmsKeyId, KeySpec: 'AES_256', EncryptionContext: context }))
    .catch((err: unknown) => {
      throw isTransientAwsError(err)
        ? new CredentialServiceUnavailableError(`KMS GenerateDataKey failed: ${errorName(err)}`, { cause: err })
        : new EnvelopeEncryptionError(`KMS refused GenerateDataKey for ${kmsKeyId}: ${errorName(err)}`, { cause: err });
    });
  const dataKey = generated.Plaintext;
  try {
    if (dataKey?.length !== DATA_KEY_BYTES || !generated.CiphertextBlob) {
      throw new EnvelopeEncryptionError('KMS GenerateDataKey returned no usable data key');
    }
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, dataKey, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(context));
    const keyCiphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return {
      keyCiphertext,
      dataKeyCiphertext: generated.CiphertextBlob,
      iv,
      authTag: cipher.getAuthTag(),
      kmsKeyId: generated.KeyId ?? kmsKeyId,
    };
  } finally {
    dataKey?.fill(0);
  }
}

/**
 * Decrypts what {@link sealSecret} made for the same `owner`.
 * @throws EnvelopeDecryptionError when KMS refuses the data key (other owner, tampered blob, key disabled or
 *   deleted) or the GCM tag does not verify (tampered ciphertext, IV or tag).
 * @throws CredentialServiceUnavailableError when KMS is unreachable or throttling (retry later).
 */
export async function openSecret(kms: KMSClient, sealed: SealedSecret, owner: EnvelopeOwner): Promise<string> {
  const context = encryptionContextFor(owner);
  const dataKey = await unwrapDataKey(kms, sealed, context);
  let plaintext: Buffer | undefined;
  try {
    const decipher = createDecipheriv(CIPHER, dataKey, sealed.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(context));
    decipher.setAuthTag(sealed.authTag);
    plaintext = Buffer.concat([decipher.update(sealed.keyCiphertext), decipher.final()]);
    return plaintext.toString('utf8');
  } catch (err) {
    throw new EnvelopeDecryptionError('AES-GCM authentication of the stored secret failed', { cause: err });
  } finally {
    dataKey.fill(0);
    plaintext?.fill(0);
  }
}

async function unwrapDataKey(kms: KMSClient, sealed: SealedSecret, context: Record<string, string>): Promise<Uint8Array> {
  const out = await kms
    .send(new DecryptCommand({ CiphertextBlob: sealed.dataKeyCiphertext, EncryptionContext: context, KeyId: sealed.kmsKeyId }))
    .catch((err: unknown) => {
      throw isTransientAwsError(err)
        ? new CredentialServiceUnavailableError(`KMS Decrypt failed: ${errorName(err)}`, { cause: err })
        : new EnvelopeDecryptionError(`KMS refused to decrypt the data key: ${errorName(err)}`, { cause: err });
    });
  if (out.Plaintext?.length !== DATA_KEY_BYTES) {
    out.Plaintext?.fill(0);
    throw new EnvelopeDecryptionError('KMS Decrypt returned no usable data key');
  }
  return out.Plaintext;
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}
