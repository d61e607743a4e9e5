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
import { executeTogether, insertStatement, type SqlStatement } from '../db/sql.ts';
import { affectedRows, runAtomically } from '../db/sql-pool.ts';
import type { RowProjection } from '../jobs/projector.ts';
import { CancelRequestedError, JobNotFoundError, LeaseLostError, StaleTransitionError } from '../jobs/lifecycle-errors.ts';
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
  if (!projector || projector.rows) {
    const rows = projector?.rows ? projector.rows(job, result.output, { input: result.input }) : { rows: [], refs: [] };
    const script = rowsProjectionScript(job, fence, result, rows, deps.instanceId);
    if (script) return projectInOneRoundTrip(job, fence, result, script, deps);
  }
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

/**
 * RDS Proxy pins a session for a statement over 16 KB: a projection whose script would come near that (a
 * long quiz, say) takes the Prisma transaction path, whose statements are each smaller.
 */
const MAX_SCRIPT_BYTES = 12_000;

interface ProjectionScript {
  statements: SqlStatement[];
  succeeded: AiJob;
}

/**
 * The whole projection as one script for {@link runAtomically}: the success claim (fenced UPDATE), then every
 * business row, artifact, the audit row and the `ai.job.succeeded` event, each an `INSERT … SELECT … FROM
 * AiJob WHERE <this claim's values>` so that they insert nothing unless the claim matched (a script cannot
 * branch, and no session variable may carry the outcome: RDS Proxy would pin the session). The claim's own
 * values — succeeded, this lease version, this output hash, this finish time — are what only this claim can
 * have written, and the row stays locked by its UPDATE until the COMMIT. Last, the row as it stands, read with a
 * share lock (the latest committed version), to explain a refusal. Undefined when the script is too large.
 */
function rowsProjectionScript(
  job: AiJob, fence: LeaseFence, result: AttemptResult, projection: RowProjection, actor: string,
): ProjectionScript | undefined {
  const now = new Date();
  const route = result.generated.route;
  const succeeded: AiJob = {
    ...job, modelProvider: route.provider, modelName: route.model, lifecycleStatus: 'succeeded', outputHash: result.outputHash,
    progress: 100, finishedAt: now, lockedBy: null, lockUntil: null, errorCode: null, publicErrorMessage: null,
    internalErrorMessage: null, updatedAt: now,
  };
  const ours = {
    sql: "FROM `AiJob` WHERE id = ? AND lifecycleStatus = 'succeeded' AND leaseVersion = ? AND outputHash = ? AND finishedAt = ?",
    values: [job.id, fence.leaseVersion, result.outputHash, now],
  };
  const gated = (insert: SqlStatement): SqlStatement => {
    // `INSERT INTO t (cols) VALUES (?, …)` → `INSERT INTO t (cols) SELECT ?, … FROM AiJob WHERE <ours>`
    const at = insert.sql.lastIndexOf(' VALUES (');
    return { sql: `${insert.sql.slice(0, at)} SELECT ${insert.sql.slice(at + 9, -1)} ${ours.sql}`, values: [...insert.values, ...ours.values] };
  };
  const statements: SqlStatement[] = [
    {
      sql: `UPDATE \`AiJob\` SET modelProvider = ?, modelName = ?, lifecycleStatus = 'succeeded', outputHash = ?, progress = 100,
              finishedAt = ?, lockedBy = NULL, lockUntil = NULL, errorCode = NULL, publicErrorMessage = NULL,
              internalErrorMessage = NULL, updatedAt = ?
            WHERE id = ? AND lifecycleStatus = 'running' AND lockedBy = ? AND leaseVersion = ? AND cancelRequestedAt IS NULL`,
      values: [route.provider, route.model, result.outputHash, now, now, job.id, fence.holder, fence.leaseVersion],
    },
    ...projection.rows.map((row) => gated(insertStatement(row.table, row.values))),
    ...projection.refs.map((r) => gated(insertStatement('AiJobArtifact', {
      id: newId(), jobId: job.id, artifactType: r.artifactType, artifactId: r.artifactId, ordinal: r.ordinal, createdAt: now,
    }))),
    ...successStatements(succeeded, fence, { actor, reason: `attempt ${job.attemptCount}` }).map(gated),
    {
      sql: 'SELECT lifecycleStatus, lockedBy, leaseVersion, cancelRequestedAt, outputHash FROM `AiJob` WHERE id = ? LOCK IN SHARE MODE',
      values: [job.id],
    },
  ];
  const bytes = statements.reduce((n, st) => n + st.sql.length + st.values.reduce<number>((m, v) => m + (typeof v === 'string' ? v.length * 2 + 2 : 24), 0), 0);
  return bytes > MAX_SCRIPT_BYTES ? undefined : { statements, succeeded };
}

/** Runs the projection script; explains a refused claim exactly as the transaction path does. */
async function projectInOneRoundTrip(
  job: AiJob, fence: LeaseFence, result: AttemptResult, script: ProjectionScript, deps: EngineDeps,
): Promise<Projection> {
  await deps.checkpoints?.insideProjection?.(job);
  const results = await runAtomically(script.statements);
  if (affectedRows(results[0]) === 1) return { kind: 'projected', job: script.succeeded };
  const [current] = results.at(-1) as Pick<AiJob, 'lifecycleStatus' | 'lockedBy' | 'leaseVersion' | 'cancelRequestedAt' | 'outputHash'>[];
  if (!current) throw new JobNotFoundError(job.id);
  if (current.lifecycleStatus === 'succeeded') {
    if (current.outputHash === result.outputHash) {
      return { kind: 'already_projected', job: await deps.db.aiJob.findUniqueOrThrow({ where: { id: job.id } }) };
    }
    deps.logger.error('output refused: the job already succeeded with another output', {
      jobId: job.id, storedHash: current.outputHash, refusedHash: result.outputHash,
    });
    throw new OutputConflictError(job.id, current.outputHash, result.outputHash);
  }
  if (current.lifecycleStatus !== 'running') throw new StaleTransitionError(job.id, 'markSucceeded', current.lifecycleStatus);
  const ours = current.lockedBy === fence.holder && Number(current.leaseVersion) === fence.leaseVersion;
  if (ours && current.cancelRequestedAt !== null) throw new CancelRequestedError(job.id);
  throw new LeaseLostError(job.id, fence.leaseVersion);
}
