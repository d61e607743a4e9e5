/**
 * PROJECT (ADR-003 §6): one transaction writes the business rows (the definition's projector), an
 * AiJobArtifact per row, and marks the job succeeded fenced by its lease and by the absence of a cancel
 * request; the lifecycle repository adds the `ai.job.succeeded` outbox row in that same transaction. A worker
 * that lost its lease rolls back and projects nothing; a projector failure rolls everything back.
 *
 * Output hash (ADR-003 §5.6): a job that already succeeded with the same output hash is recognised and
 * nothing is written (`already_projected`); a different output for it is refused (OutputConflictError) —
 * the first result stands.
 */
import type { AiJob } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { EngineError } from '../errors.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import { claimSuccess, successStatements, type LeaseFence } from '../jobs/lifecycle-repository.ts';
import { executeTogether, insertStatement } from '../db/sql.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { AttemptResult } from './attempt.ts';

/** A different output for a job that already succeeded: refused, nothing written; the first result stands. */
export class OutputConflictError extends EngineError {
  readonly code = 'OUTPUT_CONFLICT';
  constructor(readonly jobId: string, readonly storedHash: string | null, readonly newHash: string) {
    super(`job ${jobId} already succeeded with output ${storedHash ?? '(none)'}; refusing output ${newHash}`);
  }
}

export type Projection = { kind: 'projected' | 'already_projected'; job: AiJob };

export async function projectResult(
  job: AiJob, def: JobDefinition, fence: LeaseFence, result: AttemptResult, deps: EngineDeps,
): Promise<Projection> {
  const projector = def.projector ? deps.projectors.get(def.projector) : undefined;
  return deps.db.$transaction(async (tx) => {
    // Before any lock: a cancel accepted here makes the success claim below refuse (CancelRequestedError).
    await deps.checkpoints?.insideProjection?.(job);
    // The success claim first: from here the job row is ours until the commit, and a job that already
    // succeeded is recognised before the projector runs.
    const succeeded = await claimSuccess(tx, job, fence, { outputHash: result.outputHash, model: result.generated.route });
    if ('kind' in succeeded) {
      if (succeeded.outputHash === result.outputHash) {
        return { kind: 'already_projected', job: await tx.aiJob.findUniqueOrThrow({ where: { id: job.id } }) };
      }
      deps.logger.error('output refused: the job already succeeded with another output', {
        jobId: job.id, storedHash: succeeded.outputHash, refusedHash: result.outputHash,
      });
      throw new OutputConflictError(job.id, succeeded.outputHash, result.outputHash);
    }
    const refs = projector ? await projector.project(tx, job, result.output, { input: result.input }) : [];
    // The artifacts, the audit row and the event: one round trip.
    const at = succeeded.finishedAt ?? new Date();
    const artifacts = refs.map((r) => insertStatement('AiJobArtifact', {
      id: newId(), jobId: job.id, artifactType: r.artifactType, artifactId: r.artifactId, ordinal: r.ordinal, createdAt: at,
    }));
    await executeTogether(tx, [...artifacts, ...successStatements(succeeded, fence, { actor: deps.instanceId, reason: `attempt ${job.attemptCount}` })]);
    return { kind: 'projected', job: succeeded };
  });
}
