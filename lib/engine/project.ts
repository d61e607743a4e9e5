/**
 * PROJECT (ADR-003 §6): one transaction writes the business rows (the definition's projector), an
 * AiJobArtifact per row, and marks the job succeeded fenced by its lease; the lifecycle repository adds the
 * `ai.job.succeeded` outbox row in that same transaction. A worker that lost its lease rolls back and
 * projects nothing; a projector failure rolls everything back.
 */
import type { AiJob } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import { markSucceeded, type LeaseFence } from '../jobs/lifecycle-repository.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { AttemptResult } from './attempt.ts';

export async function projectResult(
  job: AiJob, def: JobDefinition, fence: LeaseFence, result: AttemptResult, deps: EngineDeps,
): Promise<AiJob> {
  const projector = def.projector ? deps.projectors.get(def.projector) : undefined;
  return deps.db.$transaction(async (tx) => {
    const refs = projector ? await projector.project(tx, job, result.output) : [];
    if (refs.length > 0) {
      await tx.aiJobArtifact.createMany({
        data: refs.map((r) => ({ id: newId(), jobId: job.id, artifactType: r.artifactType, artifactId: r.artifactId, ordinal: r.ordinal })),
      });
    }
    return markSucceeded(tx, job.id, fence, {
      actor: deps.instanceId, reason: `attempt ${job.attemptCount}`, outputHash: result.outputHash, model: result.generated.route,
    });
  });
}
