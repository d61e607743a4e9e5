/**
 * `synthetic_job`: a job type with no business meaning, for tests and benchmarks. It drives the whole
 * pipeline (creation, dispatch, engine, projection) against the mock AI provider; `scenario` selects the
 * provider's behaviour (e.g. a rate limit or invalid output) and `sleepMs` holds the attempt open so
 * timeouts and cancellation can be exercised.
 */
import { z } from 'zod';
import { defineJob } from '../jobs/definition.ts';

export const syntheticJobInputSchema = z.strictObject({
  prompt: z.string().min(1).max(4000),
  /** A mock-provider scenario name; absent means a normal answer. */
  scenario: z.string().min(1).max(64).optional(),
  sleepMs: z.number().int().min(0).max(60_000).optional(),
});

export const syntheticJobOutputSchema = z.object({
  answer: z.string(),
  echo: z.string().optional(),
});

export type SyntheticJobInput = z.output<typeof syntheticJobInputSchema>;
export type SyntheticJobOutput = z.output<typeof syntheticJobOutputSchema>;

export const syntheticJob = defineJob({
  jobType: 'synthetic_job',
  metadata: {
    label: 'Synthetic job',
    description: 'Answers a prompt through the mock provider; exercises the engine end to end in tests and benchmarks.',
    domain: 'maintenance',
    version: '1',
  },
  queue: { queueName: 'interactive', defaultPriority: 50, messageGroup: 'job' },
  execution: {
    timeoutMs: 30_000,
    maxRetries: 2,
    retryBackoff: { type: 'exponential', delayMs: 1_000, maxDelayMs: 30_000 },
    cancellable: true,
    abortStrategy: 'fail',
  },
  input: { schemaVersion: 'v1' },
  output: { schemaVersion: 'v1' },
  prompt: { key: 'synthetic', version: 'v1' },
  model: { tier: 'fast' },
  credential: { allowedModes: ['platform_key'], defaultMode: 'platform_key' },
  projector: 'synthetic',
  security: { contentSafetyCheck: false, outputRedaction: false },
  // Generous so load tests are never throttled by quotas.
  limits: { maxActiveJobsPerUser: 1_000, dailyQuotaPerUser: 100_000 },
  inputSchema: syntheticJobInputSchema,
  outputSchema: syntheticJobOutputSchema,
});
