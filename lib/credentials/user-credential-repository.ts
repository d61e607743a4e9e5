/**
 * Users' own provider keys (`UserModelCredential`): the one door to that table. A row holds only the KMS
 * envelope (lib/credentials/envelope.ts) and a fingerprint (lib/credentials/key-shape.ts); the plaintext key
 * exists only in memory, between the API request that stores it and the encryption, and between decryption
 * and the provider call of a job.
 *
 * Invariant: at most one `active` row per (userId, provider) once a store commits — a store inserts its row
 * and revokes every other active row in the same transaction (details at {@link storeUserKey}).
 * Errors and return values never carry the key; `storeUserKey` returns only id, fingerprint and time.
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import type { CredentialSet } from '../ai/types.ts';
import type { Db, Prisma } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { CredentialInvalidError } from '../jobs/failures.ts';
import { getKmsClient } from './aws-clients.ts';
import { openSecret, sealSecret, type SealedSecret } from './envelope.ts';
import { CredentialNotFoundError, EnvelopeDecryptionError, UnsupportedKeyProviderError } from './errors.ts';
import { assertApiKeyShape, fingerprintOf } from './key-shape.ts';
import { withWriteConflictRetry } from './write-conflicts.ts';

/** Providers a user may bring a key for (ADR-003 §8.1: DeepSeek only). */
export const USER_KEY_PROVIDERS = ['deepseek'] as const;
export type UserKeyProvider = (typeof USER_KEY_PROVIDERS)[number];

/** What the API's `PUT /api/ai/credentials/deepseek` hands over. */
export interface StoreUserKeyInput {
  userId: string;
  provider: UserKeyProvider;
  /** The plaintext key; validated, encrypted, then dropped. */
  apiKey: string;
  /** KMS key (id, ARN or alias) that wraps the data key; in deployments from `CREDENTIALS_KMS_KEY_ID`. */
  kmsKeyId: string;
}

/** All the API may show about a stored key. */
export interface StoredKeyInfo {
  id: string;
  fingerprint: string;
  createdAt: Date;
}

/** The active key as `GET`/`PUT` responses may show it. */
export interface ActiveKeyInfo extends StoredKeyInfo {
  provider: string;
}

/** Injected services; defaults are the process-wide clients. */
export interface CredentialDeps {
  kms?: KMSClient;
}

/**
 * Encrypts and stores the user's key, revoking the previous active one.
 *
 * KMS is called before the transaction (no network wait inside it). The transaction inserts the new row,
 * then revokes every other active row of the user and provider. Two concurrent stores either serialise (the
 * later sees and revokes the earlier) or deadlock, in which case the transaction is retried; the last to
 * commit stays active. When `db` is already a transaction the caller owns it, and a deadlock reaches them.
 *
 * @throws UnsupportedKeyProviderError | CredentialKeyFormatError before any KMS or DB call.
 * @throws EnvelopeEncryptionError | CredentialServiceUnavailableError from KMS.
 */
export async function storeUserKey(db: Db, input: StoreUserKeyInput, deps: CredentialDeps = {}): Promise<StoredKeyInfo> {
  assertUserKeyProvider(input.provider);
  assertApiKeyShape(input.apiKey);
  const owner = { userId: input.userId, provider: input.provider };
  const sealed = await sealSecret(deps.kms ?? getKmsClient(), input.kmsKeyId, input.apiKey, owner);
  const fingerprint = fingerprintOf(input.userId, input.apiKey);
  const write = (tx: Prisma.TransactionClient) => insertActiveRevokingOthers(tx, newId(), owner, sealed, fingerprint);
  if ('$transaction' in db) return withWriteConflictRetry(() => db.$transaction(write));
  return write(db);
}

async function insertActiveRevokingOthers(
  tx: Prisma.TransactionClient,
  id: string,
  owner: { userId: string; provider: string },
  sealed: SealedSecret,
  fingerprint: string,
): Promise<StoredKeyInfo> {
  const row = await tx.userModelCredential.create({
    data: {
      id,
      ...owner,
      keyCiphertext: bytes(sealed.keyCiphertext),
      dataKeyCiphertext: bytes(sealed.dataKeyCiphertext),
      iv: bytes(sealed.iv),
      authTag: bytes(sealed.authTag),
      kmsKeyId: sealed.kmsKeyId,
      fingerprint,
      status: 'active',
    },
    select: { id: true, fingerprint: true, createdAt: true },
  });
  await tx.userModelCredential.updateMany({
    where: { ...owner, status: 'active', id: { not: id } },
    data: { status: 'revoked', revokedAt: new Date() },
  });
  return row;
}

/**
 * Revokes the user's active key for `provider` (the API's `DELETE`). The key's ciphertext stays (audit, and
 * jobs that name it fail with CredentialInvalidError) but can no longer be resolved.
 * @returns how many rows were revoked (1, unless an earlier race left more than one active).
 * Retried when chosen as a deadlock victim (./write-conflicts.ts).
 * @throws CredentialNotFoundError when nothing was active (the API's 404; revoking twice is harmless).
 */
export async function revokeUserKey(db: Db, userId: string, provider: string): Promise<number> {
  // A concurrent store (insert + revoke others) can make this UPDATE a deadlock victim; it wrote nothing then.
  const { count } = await withWriteConflictRetry(() => db.userModelCredential.updateMany({
    where: { userId, provider, status: 'active' },
    data: { status: 'revoked', revokedAt: new Date() },
  }));
  if (count === 0) throw new CredentialNotFoundError(provider);
  return count;
}

/**
 * SQL of a scalar subquery: the id of the user's active DeepSeek key (the newest, as {@link getActiveUserKeyInfo}),
 * or NULL; one placeholder, the user id. For reads that go with other SQL in one round trip (job creation).
 */
export const ACTIVE_USER_KEY_ID_SQL =
  "(SELECT id FROM UserModelCredential WHERE userId = ? AND provider = 'deepseek' AND status = 'active' ORDER BY id DESC LIMIT 1)";

/** The user's active key for `provider` as the API may show it, or null. */
export async function getActiveUserKeyInfo(db: Db, userId: string, provider: string): Promise<ActiveKeyInfo | null> {
  return db.userModelCredential.findFirst({
    where: { userId, provider, status: 'active' },
    orderBy: { id: 'desc' },
    select: { id: true, provider: true, fingerprint: true, createdAt: true },
  });
}

/**
 * The credential set of a `user_deepseek_key` job: the user's key, decrypted. With `credentialId`, that row,
 * which must be the user's and active; without, the user's active DeepSeek key. `keyFor('deepseek')` returns
 * the key; every other provider gets undefined (the router skips it).
 *
 * @throws CredentialInvalidError when the row is missing, another user's, revoked, or does not decrypt
 *   (tampered, moved to another user, KMS key disabled). Its message names the row and the reason only.
 * @throws CredentialServiceUnavailableError when KMS cannot be reached (retryable).
 */
export async function resolveUserCredentialSet(
  db: Db,
  ref: { userId: string; credentialId?: string | null },
  deps: CredentialDeps = {},
): Promise<CredentialSet> {
  const row = await findResolvableRow(db, ref.userId, ref.credentialId ?? undefined);
  const owner = { userId: ref.userId, provider: row.provider };
  const apiKey = await openSecret(deps.kms ?? getKmsClient(), row, owner).catch((err: unknown) => {
    if (!(err instanceof EnvelopeDecryptionError)) throw err;
    throw new CredentialInvalidError(`User credential ${row.id} could not be decrypted: ${err.message}`, { cause: err });
  });
  return { mode: 'user_deepseek_key', credentialId: row.id, keyFor: (provider) => (provider === row.provider ? apiKey : undefined) };
}

const resolvableColumns = {
  id: true, userId: true, provider: true, status: true,
  keyCiphertext: true, dataKeyCiphertext: true, iv: true, authTag: true, kmsKeyId: true,
} as const;

async function findResolvableRow(db: Db, userId: string, credentialId: string | undefined) {
  if (credentialId === undefined) {
    const active = await db.userModelCredential.findFirst({
      where: { userId, provider: 'deepseek', status: 'active' },
      orderBy: { id: 'desc' },
      select: resolvableColumns,
    });
    if (!active) throw new CredentialInvalidError('The user has no active deepseek key');
    return active;
  }
  const row = await db.userModelCredential.findFirst({ where: { id: credentialId, userId }, select: resolvableColumns });
  if (!row) throw new CredentialInvalidError(`User credential ${credentialId} does not exist or belongs to another user`);
  if (row.status !== 'active') throw new CredentialInvalidError(`User credential ${row.id} was revoked`);
  if (!isUserKeyProvider(row.provider)) {
    throw new CredentialInvalidError(`User credential ${row.id} is for ${row.provider}, which user keys do not support`);
  }
  return row;
}

function isUserKeyProvider(provider: string): provider is UserKeyProvider {
  return (USER_KEY_PROVIDERS as readonly string[]).includes(provider);
}

function assertUserKeyProvider(provider: string): void {
  if (!isUserKeyProvider(provider)) throw new UnsupportedKeyProviderError(provider);
}

/** Prisma's `Bytes` wants a Uint8Array over a plain ArrayBuffer; copies a Buffer view into one. */
function bytes(view: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(view);
}
