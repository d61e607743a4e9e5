/**
 * Which credential a user's new job runs on. A user who stored their own DeepSeek key (PUT
 * /api/ai/credentials/deepseek) has their jobs run — and billed — on it, wherever the job type allows user
 * keys; everyone else runs on the platform's keys. The job records the key's id, so a later revocation fails
 * that job with CREDENTIAL_INVALID instead of silently switching to the platform's key.
 */
import type { Db } from '../db/client.ts';
import type { CredentialMode } from '../db/generated/enums.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import { getActiveUserKeyInfo } from '../credentials/user-credential-repository.ts';

export interface JobCredentialChoice {
  credentialMode?: CredentialMode;
  credentialId?: string;
}

export async function credentialForNewJob(db: Db, userId: string, def: Pick<JobDefinition, 'credential'>): Promise<JobCredentialChoice> {
  if (!def.credential.allowedModes.includes('user_deepseek_key')) return {};
  const key = await getActiveUserKeyInfo(db, userId, 'deepseek');
  return key ? { credentialMode: 'user_deepseek_key', credentialId: key.id } : {};
}
