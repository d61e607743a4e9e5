/**
 * `synthetic_job`: a job type with no business meaning, for tests and benchmarks. It drives the whole
 * pipeline (creation, dispatch, engine, projection) against the mock AI provider; `scenario` selects the
 * provider's behaviour (e.g. a rate limit or invalid output) and `sleepMs` holds the attempt open so
 * timeouts and cancellation can be exercised.
 */
import * as z from 'zod';
import { syntheticPromptV1 } from '../ai/prompts/synthetic.ts';
import type { AiJob, Prisma } from '../db/client.ts';
import { defineJob } from '../jobs/definition.ts';
import type { ArtifactRef, ResultProjector } from '../jobs/projector.ts';
import type { JobTypeModule } from './job-type-module.ts';

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

/** `AiJobArtifact.artifactType` of a synthetic job's one reference. */
export const SYNTHETIC_ARTIFACT_TYPE = 'SyntheticAnswer';

/**
 * Projector `synthetic`. A synthetic job has no business table: its answer matters only to the test or benchmark
 * that ran it (which checks `outputHash` or the provider's request log), and a table would only add write cost
 * unrelated to any real type. It still returns one reference, pointing at the job itself (`artifactId` = job id,
 * as there is no row of its own), so every synthetic run exercises the engine's artifact write (one
 * `AiJobArtifact`, unique per job) exactly as a real type does. Writes nothing itself.
 */
export const syntheticProjector: ResultProjector<SyntheticJobOutput> = {
  key: 'synthetic',
  async project(_tx: Prisma.TransactionClient, job: AiJob): Promise<ArtifactRef[]> {
    return [{ artifactType: SYNTHETIC_ARTIFACT_TYPE, artifactId: job.id, ordinal: 0 }];
  },
};

/** The mock provider's markers (`[scenario:…]`, `[sleep:…]`, `[tps:…]`, `[first_token:…]`, lib/dev/mock-markers.ts): not part of the prompt. */
const MOCK_MARKER = /\[(?:scenario|sleep|tps|first_token):[^\]]*\]/g;

/**
 * The mock provider's answer to a synthetic prompt, the same as the mock server's default answer:
 * `{ answer, echo }` with `echo` the first 40 characters of the prompt, markers removed.
 */
export function mockSyntheticJob(userMessage: string): SyntheticJobOutput {
  const prompt = userMessage.replace(MOCK_MARKER, '').trim();
  return { answer: `Mock answer (${prompt.length} characters of prompt)`, echo: prompt.slice(0, 40) };
}

/** The `synthetic_job` job type; its prompt is `synthetic@v1` (lib/ai/prompts/synthetic.ts). */
export const syntheticJobModule: JobTypeModule<SyntheticJobInput, SyntheticJobOutput> = {
  definition: syntheticJob,
  prompt: syntheticPromptV1,
  projector: syntheticProjector,
  mockResponse: mockSyntheticJob,
};
