/**
 * Helpers for the job types' result projectors. The frozen projector interface (ADR-003 §6.1) hands a projector
 * the job and its validated output, not its input; business rows that need an input field (the concept, the
 * difficulty, the requested count) read it from the job's snapshot, the redacted input the job ran on (its prompt
 * was rendered from the same content), through the projection transaction.
 */
import type { z } from 'zod';
import type { AiJob, Prisma } from '../db/client.ts';
import type { ArtifactRef, ProjectionContext } from '../jobs/projector.ts';
import { InternalJobError } from '../jobs/failures.ts';
import { findSnapshot } from '../jobs/snapshot-repository.ts';

/**
 * The job's input, from `context` (what the engine's attempt parsed) or else read from its snapshot in `tx`,
 * parsed with the type's input schema.
 * @throws InternalJobError when the snapshot is missing or no longer parses (a bug or a deleted snapshot,
 *   not something the model did)
 */
export async function readSnapshotInput<I>(
  tx: Prisma.TransactionClient, job: AiJob, schema: z.ZodType<I>, context?: ProjectionContext,
): Promise<I> {
  // The engine passes the input its attempt parsed from the same snapshot: no second read.
  let content: unknown = context?.input;
  if (context === undefined) {
    const snapshot = await findSnapshot(tx, job.id);
    if (!snapshot) throw new InternalJobError(`Job ${job.id} (${job.jobType}) has no input snapshot to project with`);
    content = snapshot.content;
  }
  return parseProjectionInput(job, schema, content);
}

/**
 * The job's input (from the engine's context or a snapshot) parsed with the type's input schema.
 * @throws InternalJobError when it no longer parses
 */
export function parseProjectionInput<I>(job: AiJob, schema: z.ZodType<I>, content: unknown): I {
  const parsed = schema.safeParse(content);
  if (!parsed.success) {
    throw new InternalJobError(`Input snapshot of job ${job.id} (${job.jobType}) does not parse with its input schema`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

/** References to business rows of table `artifactType`, in ordinal order. */
export function artifactRefs(artifactType: string, rows: readonly { id: string; ordinal: number }[]): ArtifactRef[] {
  return [...rows]
    .sort((a, b) => a.ordinal - b.ordinal)
    .map((row) => ({ artifactType, artifactId: row.id, ordinal: row.ordinal }));
}
