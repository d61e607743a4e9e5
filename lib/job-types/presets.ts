/**
 * Policy presets shared by the learner-facing job types, so a change of policy (limits, credentials, retry
 * behaviour of background generation) is made once. A job type spreads the presets it follows and states
 * everything else itself.
 */
import type { JobDefinitionSpec } from '../jobs/definition.ts';

/** Learner-provided text: safety-checked, either credential mode (platform key by default), modest limits. */
export const LEARNER_CONTENT: Pick<JobDefinitionSpec, 'input' | 'output' | 'model' | 'credential' | 'security' | 'limits'> = {
  input: { schemaVersion: 'v1' },
  output: { schemaVersion: 'v1' },
  model: { tier: 'standard' },
  credential: { allowedModes: ['platform_key', 'user_deepseek_key'], defaultMode: 'platform_key' },
  security: { contentSafetyCheck: true, outputRedaction: false },
  limits: { maxActiveJobsPerUser: 5, dailyQuotaPerUser: 200 },
};

/** Generation in the background queue: long timeout, two retries with 5 s backoff, retried on timeout. */
export const BACKGROUND_GENERATION: Pick<JobDefinitionSpec, 'queue' | 'execution'> = {
  queue: { queueName: 'background', defaultPriority: 50, messageGroup: 'job' },
  execution: {
    timeoutMs: 180_000,
    maxRetries: 2,
    retryBackoff: { type: 'exponential', delayMs: 5_000, maxDelayMs: 60_000 },
    cancellable: true,
    abortStrategy: 'retry',
  },
};
