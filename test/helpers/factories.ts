/**
 * Test factories: rows in any state in one line, e.g.
 *   await insertJob({ lifecycleStatus: 'running', lockUntil: minutesAgo(5) })   // a running job with an expired lease
 * Defaults per state are coherent (a running job holds a lease, a terminal job has finishedAt, …).
 */
import { getPrisma, type AiJob, type Prisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import type { JobState } from '../../lib/jobs/states.ts';

export type JobOverrides = Partial<Prisma.AiJobUncheckedCreateInput> & { lifecycleStatus?: JobState };

export const TEST_HOLDER = 'worker-test';

export function minutesAgo(n: number): Date {
  return new Date(Date.now() - n * 60_000);
}

export function secondsFromNow(n: number): Date {
  return new Date(Date.now() + n * 1000);
}

function stateDefaults(state: JobState): Partial<Prisma.AiJobUncheckedCreateInput> {
  const now = new Date();
  switch (state) {
    case 'queued':
      return {};
    case 'running':
      return { lockedBy: TEST_HOLDER, lockedAt: now, lockUntil: secondsFromNow(60), leaseVersion: 1, attemptCount: 1, startedAt: now };
    case 'succeeded':
      return { leaseVersion: 1, attemptCount: 1, startedAt: now, finishedAt: now, progress: 100, outputHash: 'a'.repeat(64) };
    case 'failed':
      return { leaseVersion: 1, attemptCount: 1, startedAt: now, finishedAt: now, errorCode: 'INTERNAL', publicErrorMessage: 'failed' };
    case 'cancelled':
      return { finishedAt: now, errorCode: 'CANCELLED', publicErrorMessage: 'The job was cancelled' };
  }
}

/** Inserts a synthetic_job row directly (no snapshot, no outbox row) in the given state. */
export async function insertJob(overrides: JobOverrides = {}): Promise<AiJob> {
  const state = overrides.lifecycleStatus ?? 'queued';
  return getPrisma().aiJob.create({
    data: {
      id: newId(),
      userId: 'user-1',
      jobType: 'synthetic_job',
      triggerType: 'user',
      targetType: 'test',
      targetId: 'target-1',
      inputHash: '0'.repeat(64),
      queueName: 'interactive',
      priority: 50,
      maxAttempts: 3,
      timeoutMs: 30_000,
      inputSchemaVersion: 'v1',
      outputSchemaVersion: 'v1',
      promptKey: 'synthetic',
      promptVersion: 'v1',
      modelTier: 'fast',
      credentialMode: 'platform_key',
      ...stateDefaults(state),
      ...overrides,
      lifecycleStatus: state,
    },
  });
}

/** The job's audit history, oldest first. */
export async function transitionsOf(jobId: string) {
  return getPrisma().aiJobTransition.findMany({ where: { jobId }, orderBy: { id: 'asc' } });
}
