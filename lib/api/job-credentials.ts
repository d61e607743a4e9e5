/**
 * Which credential a user's new job runs on. A user who stored their own DeepSeek key (PUT
 * /api/ai/credentials/deepseek) has their jobs run — and billed — on it, wherever the job type allows user
 * keys; everyone else runs on the platform's keys. The job records the key's id, so a later revocation fails
 * that job with CREDENTIAL_INVALID instead of silently switching to the platform's key. The key is read inside
 * the transaction that creates the job (createJob's `userKeyIfStored`, lib/jobs/create-job.ts).
 */
import type { JobDefinition } from '../jobs/definition.ts';

/** Whether jobs of this type may run on a user's own key. */
export function allowsUserKeys(def: Pick<JobDefinition, 'credential'>): boolean {
  return def.credential.allowedModes.includes('user_deepseek_key');
}
