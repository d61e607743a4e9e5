/** Shared helpers for the job type suites: a job with its input snapshot, projection in a transaction, row counts. */
import { expect } from 'vitest';
import { getPrisma, type AiJob, type Prisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import type { JobTypeModule } from '../../lib/job-types/job-type-module.ts';
import { maxAttemptsOf, type JobDefinitionSpec } from '../../lib/jobs/definition.ts';
import type { ArtifactRef } from '../../lib/jobs/projector.ts';
import { insertJob, type JobOverrides } from '../helpers/factories.ts';

/** Thrown inside a transaction to roll it back on purpose. */
export class RollbackForTest extends Error {}

/**
 * A running job of `module`'s type whose snapshot holds `input` parsed by the type's input schema, as job
 * creation would have stored it.
 */
export async function insertJobWithInput<I, O>(
  module: JobTypeModule<I, O>,
  input: unknown,
  overrides: JobOverrides = {},
): Promise<AiJob> {
  const def = module.definition as JobDefinitionSpec<I, O>;
  const job = await insertJob({
    lifecycleStatus: 'running',
    jobType: def.jobType,
    queueName: def.queue.queueName,
    timeoutMs: def.execution.timeoutMs,
    maxAttempts: maxAttemptsOf(def),
    promptKey: def.prompt.key,
    promptVersion: def.prompt.version,
    modelTier: def.model.tier,
    ...overrides,
  });
  const content = def.inputSchema.parse(input) as Prisma.InputJsonValue;
  await getPrisma().aiJobSnapshot.create({
    data: { id: newId(), jobId: job.id, schemaVersion: def.input.schemaVersion, content, contentHash: '0'.repeat(64), redactionVersion: 1 },
  });
  return job;
}

/** Runs the module's projector for `job` in its own committed transaction. */
export async function projectCommitted<O>(module: JobTypeModule<unknown, O>, job: AiJob, output: O): Promise<ArtifactRef[]> {
  const projector = module.projector!;
  return getPrisma().$transaction((tx) => projector.project(tx, job, output));
}

/** Runs the projector inside a transaction that is then rolled back; returns the refs it produced. */
export async function projectRolledBack<O>(module: JobTypeModule<unknown, O>, job: AiJob, output: O): Promise<ArtifactRef[]> {
  let refs: ArtifactRef[] = [];
  await expect(
    getPrisma().$transaction(async (tx) => {
      refs = await module.projector!.project(tx, job, output);
      throw new RollbackForTest('roll back');
    }),
  ).rejects.toBeInstanceOf(RollbackForTest);
  return refs;
}

/** The zod issue paths of a failed parse, joined with dots, sorted. */
export function issuePaths(result: { success: boolean; error?: { issues: readonly { path: readonly PropertyKey[] }[] } }): string[] {
  expect(result.success).toBe(false);
  return (result.error?.issues ?? []).map((i) => i.path.map(String).join('.')).sort();
}
