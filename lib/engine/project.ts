/**
 * PROJECT (ADR-003 §6): one transaction marks the job succeeded (first, fenced by its lease and by the
 * absence of a cancel request: ../jobs/lifecycle-success.ts), writes the business rows (the definition's
 * projector), an AiJobArtifact per row, the audit row and the `ai.job.succeeded` outbox row. A projector that
 * says its writes as rows gets all of it in one round trip on the raw pool; any other runs in a Prisma
 * transaction. A worker that lost its lease projects nothing; a projector failure rolls everything back.
 *
 * Output hash (ADR-003 §5.6): a job that already succeeded with the same output hash is recognised and
 * nothing is written (`already_projected`); a different output for it is refused (OutputConflictError) —
 * the first result stands.
 */
import type { AiJob } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { EngineError } from '../errors.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import type { LeaseFence } from '../jobs/lifecycle-repository.ts';
import { claimSuccess, runSuccessScript, successScript, successStatements, type SuccessRefusal } from '../jobs/lifecycle-success.ts';
import { executeTogether, insertRowsStatements } from '../db/sql.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { AttemptResult } from './attempt.ts';
import { publishStatus } from '../stream/status-entries.ts';
import type { FinalAppend } from '../stream/attempt-stream.ts';

/** A different output for a job that already succeeded: refused, nothing written; the first result stands. */
export class OutputConflictError extends EngineError {
  readonly code = 'OUTPUT_CONFLICT';
  constructor(readonly jobId: string, readonly storedHash: string | null, readonly newHash: string) {
    super(`job ${jobId} already succeeded with output ${storedHash ?? '(none)'}; refusing output ${newHash}`);
  }
}

export type Projection = { kind: 'projected' | 'already_projected'; job: AiJob };

export async function projectResult(
  job: AiJob, def: JobDefinition, fence: LeaseFence, result: AttemptResult, deps: EngineDeps, final?: FinalAppend,
): Promise<Projection> {
  const projector = def.projector ? deps.projectors.get(def.projector) : undefined;
  const success = { outputHash: result.outputHash, model: result.generated.route };
  const meta = { actor: deps.instanceId, reason: `attempt ${job.attemptCount}` };
  if (!projector || projector.rows) {
    // Rows decided without the database (a BusinessValidationError throws here, before anything is sent).
    const rows = projector?.rows ? projector.rows(job, result.output, { input: result.input }) : { rows: [], refs: [] };
    // The stream's last batch rides in the script when the script stays under 16 KB with it; else it goes first.
    const withFinal = final ? successScript(job, fence, success, rows, meta, result.usage, final) : undefined;
    if (final && !withFinal) await final.appendAlone();
    const script = withFinal ?? successScript(job, fence, success, rows, meta, result.usage);
    if (script) {
      // Before any lock: a cancel accepted here makes the success claim refuse (CancelRequestedError).
      await deps.checkpoints?.insideProjection?.(job);
      return settled(await runSuccessScript(job, fence, script, withFinal ? final?.committed : undefined), job, result, deps);
    }
  } else {
    await final?.appendAlone();
  }
  // The transaction path bills the call first, in its own autocommit INSERT.
  await result.usage.write();
  const projection = await deps.db.$transaction(async (tx): Promise<Projection> => {
    await deps.checkpoints?.insideProjection?.(job);
    // The success claim first: from here the job row is ours until the commit, and a job that already
    // succeeded is recognised before the projector runs.
    const succeeded = await claimSuccess(tx, job, fence, success);
    if ('kind' in succeeded) return settled(succeeded, job, result, deps);
    const refs = projector ? await projector.project(tx, job, result.output, { input: result.input }) : [];
    // The artifacts, the audit row and the event: one round trip.
    const at = succeeded.finishedAt ?? new Date();
    const artifacts = insertRowsStatements('AiJobArtifact', refs.map((r) => ({
      id: newId(), jobId: job.id, artifactType: r.artifactType, artifactId: r.artifactId, ordinal: r.ordinal, createdAt: at,
    })));
    await executeTogether(tx, [...artifacts, ...successStatements(succeeded, fence, meta)]);
    return { kind: 'projected', job: succeeded };
  });
  if (projection.kind === 'projected') publishStatus(projection.job); // `succeeded`, once committed
  return projection;
}

/** A claim's outcome as a projection: a refusal on a succeeded job is `already_projected` (same output) or a conflict. */
async function settled(outcome: AiJob | SuccessRefusal, job: AiJob, result: AttemptResult, deps: EngineDeps): Promise<Projection> {
  if (!('kind' in outcome)) return { kind: 'projected', job: outcome };
  if (outcome.outputHash === result.outputHash) {
    return { kind: 'already_projected', job: await deps.db.aiJob.findUniqueOrThrow({ where: { id: job.id } }) };
  }
  deps.logger.error('output refused: the job already succeeded with another output', {
    jobId: job.id, storedHash: outcome.outputHash, refusedHash: result.outputHash,
  });
  throw new OutputConflictError(job.id, outcome.outputHash, result.outputHash);
}
