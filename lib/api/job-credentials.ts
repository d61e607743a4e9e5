/**
 * Which credential a user's new job runs on. A user who stored their own DeepSeek key (PUT
 * /api/ai/credentials/deepseek) has their jobs run — and billed — on it, wherever the job type allows user
 * keys; everyone else runs on the platform's keys. The job records the key's id, so a later revocation fails
 * that job with CREDENTIAL_INVALID instead of silently switching to the platform's key.
 */
import type { CredentialMode } from '../db/generated/enums.ts';
import type { JobDefinition } from '../jobs/definition.ts';

export interface JobCredentialChoice {
  credentialMode?: CredentialMode;
  credentialId?: string;
}

/** Whether jobs of this type may run on a user's own key. */
export function allowsUserKeys(def: Pick<JobDefinition, 'credential'>): boolean {
  return def.credential.allowedModes.includes('user_deepseek_key');
}

/**
 * The credential a new job records when it is created after a limit's refusal (a replay; lib/api/user-operations.ts):
 * the user's active DeepSeek key when the type allows user keys and one is stored (its id, read with the
 * creation preflight, lib/api/creation-limits.ts), else nothing (the definition's default mode). Every other
 * create reads the key inside its own transaction (createJob's `userKeyIfStored`).
 */
export function credentialForNewJob(userKeyId: string | null): JobCredentialChoice {
  return userKeyId ? { credentialMode: 'user_deepseek_key', credentialId: userKeyId } : {};
}
