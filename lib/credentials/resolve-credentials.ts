/**
 * The RESOLVE step's credential lookup: a job's `credentialMode` picks where its provider keys come from —
 * the platform's secret (cached per container) or the job owner's stored, KMS-encrypted key.
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import type { CredentialSet } from '../ai/types.ts';
import { getPrisma, type Db } from '../db/client.ts';
import type { CredentialMode } from '../db/generated/enums.ts';
import { loadPlatformKeys, platformCredentialSet, type PlatformKeys } from './platform-keys.ts';
import { resolveUserCredentialSet } from './user-credential-repository.ts';

/** The job fields that decide its credential. */
export interface CredentialJobRef {
  userId: string;
  credentialMode: CredentialMode;
  /** The UserModelCredential the job was created with (`user_deepseek_key`); absent: the user's active key. */
  credentialId?: string | null;
}

/** Injected services; defaults are the process-wide database, KMS client and platform key cache. */
export interface ResolveCredentialsDeps {
  db?: Db;
  kms?: KMSClient;
  platformKeys?: () => Promise<PlatformKeys>;
}

/**
 * The credential set a job's provider calls use. A table over every `CredentialMode`, so a new mode fails to
 * compile until it has a resolver.
 * @throws CredentialInvalidError (missing, revoked, undecryptable or foreign key; missing or malformed
 *   platform secret) — not retryable.
 * @throws CredentialServiceUnavailableError when KMS or Secrets Manager cannot be reached — retryable.
 */
export async function resolveCredentials(job: CredentialJobRef, deps: ResolveCredentialsDeps = {}): Promise<CredentialSet> {
  const resolvers: Record<CredentialMode, () => Promise<CredentialSet>> = {
    platform_key: async () => platformCredentialSet(await (deps.platformKeys ?? loadPlatformKeys)()),
    user_deepseek_key: () =>
      resolveUserCredentialSet(deps.db ?? getPrisma(), { userId: job.userId, credentialId: job.credentialId }, { kms: deps.kms }),
  };
  return resolvers[job.credentialMode]();
}
