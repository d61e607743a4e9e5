/**
 * Part of the lifecycle repository (./lifecycle-repository.ts): the running → succeeded edge as the engine's
 * projection takes it (ADR-003 §6). The success claim comes first, before any business row: a fenced
 * compare-and-set (this lease, no cancel request) whose row lock is held to the commit, so a cancel arriving
 * while the projector writes waits and then finds the job succeeded. Its audit row and `ai.job.succeeded`
 * event commit in the same transaction. Two ways to run it:
 * - {@link claimSuccess} then {@link successStatements}, inside the caller's Prisma transaction (projectors that
 *   write through Prisma);
 * - {@link successScript}, the whole projection as one script for one round trip on the raw pool (projectors
 *   that say their writes as rows).
 * `markSucceeded` (./lifecycle-repository.ts), the edge as the transition table names it, is the first way.
 * Either way a refusal is explained the same way ({@link explainRefusedSuccess}).
 */
import type { AiJob, Prisma } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { insertRowsStatements, insertStatement, type SqlExpression, type SqlStatement, type SqlValue } from '../db/sql.ts';
import { PROXY_PIN_STATEMENT_BYTES, sentTextBytes } from '../db/large-statements.ts';
import { atomicQuery, getSqlPool, runAtomically } from '../db/sql-pool.ts';
import { buildJobTerminalEvent } from '../outbox/job-events.ts';
import { outboxInsert } from '../outbox/outbox-writer.ts';
import type { LeaseFence, TransitionMeta } from './lifecycle-repository.ts';
import { CancelRequestedError, JobNotFoundError, LeaseLostError, StaleTransitionError } from './lifecycle-errors.ts';
import type { RowProjection } from './projector.ts';
import { publishStatus } from '../stream/status-entries.ts';
import { NEXT_STATUS_SEQ, currentStatusSeq, KNOWN_NEXT_STATUS_SEQ } from './stream-seq.ts';

/**
 * An idempotent write carried in a script's transaction (the usage ledger row of the call that answered:
 * ../engine/usage-ledger.ts), to be written on its own whenever that transaction does not commit.
 */
export interface CarriedWrite {
  readonly statement: SqlStatement;
  /** Called once the transaction carrying the statement committed. */
  markWritten(): void;
  /** Writes the statement on its own (idempotent). */
  write(): Promise<void>;
}

/** What a success claim writes besides the state. */
export interface SuccessResult {
  outputHash: string;
  /** The route that answered; absent keeps the job's recorded model. */
  model?: { provider: string; model: string };
  now?: Date;
}

/** A refused claim on a job that already succeeded: the caller compares output hashes. */
export type SuccessRefusal = { kind: 'already_succeeded'; outputHash: string | null };

/** The columns that explain a refused claim. */
type ClaimState = Pick<AiJob, 'lifecycleStatus' | 'lockedBy' | 'leaseVersion' | 'cancelRequestedAt' | 'outputHash'>;

/** The latest committed row (a share lock reads it whatever snapshot the transaction holds). */
const CLAIM_STATE_SQL = 'SELECT lifecycleStatus, lockedBy, leaseVersion, cancelRequestedAt, outputHash FROM `AiJob` WHERE id = ? LOCK IN SHARE MODE';

/**
 * The claim's compare-and-set. Its `seq` follows the job's last chunk: read by the server (NEXT_STATUS_SEQ), or,
 * when the attempt knows its log's last `seq` exactly (`lastSeq`, {@link FencedChunks}), taken from it with no
 * read of the chunks (lib/jobs/stream-seq.ts, "A claim that knows its last seq").
 */
function claimUpdate(job: AiJob, fence: LeaseFence, result: SuccessResult, now: Date, lastSeq?: number): SqlStatement {
  const seq = lastSeq === undefined ? NEXT_STATUS_SEQ : KNOWN_NEXT_STATUS_SEQ;
  return {
    sql: `UPDATE \`AiJob\` SET modelProvider = COALESCE(?, modelProvider), modelName = COALESCE(?, modelName), lifecycleStatus = 'succeeded', outputHash = ?, progress = 100,
            finishedAt = ?, lockedBy = NULL, lockUntil = NULL, errorCode = NULL, publicErrorMessage = NULL,
            internalErrorMessage = NULL, updatedAt = ?, ${seq}
          WHERE id = ? AND lifecycleStatus = 'running' AND lockedBy = ? AND leaseVersion = ? AND cancelRequestedAt IS NULL`,
    values: [
      result.model?.provider ?? null, result.model?.model ?? null, result.outputHash, now, now, ...(lastSeq === undefined ? [] : [lastSeq]),
      job.id, fence.holder, fence.leaseVersion,
    ],
  };
}

/** The job as a matched claim left it, built from the locked row (no read-back). */
function succeededJob(job: AiJob, result: SuccessResult, now: Date): AiJob {
  return {
    ...job, modelProvider: result.model?.provider ?? job.modelProvider, modelName: result.model?.model ?? job.modelName, lifecycleStatus: 'succeeded',
    outputHash: result.outputHash, progress: 100, finishedAt: now, lockedBy: null, lockUntil: null, errorCode: null,
    publicErrorMessage: null, internalErrorMessage: null, updatedAt: now,
  };
}

/**
 * Why a claim matched nothing, from the row as it stands.
 * @returns a refusal when the job already succeeded (with whichever output)
 * @throws CancelRequestedError (our lease, a cancel won), LeaseLostError, StaleTransitionError, JobNotFoundError
 */
export function explainRefusedSuccess(jobId: string, fence: LeaseFence, current: ClaimState | undefined): SuccessRefusal {
  if (!current) throw new JobNotFoundError(jobId);
  if (current.lifecycleStatus === 'succeeded') return { kind: 'already_succeeded', outputHash: current.outputHash };
  if (current.lifecycleStatus !== 'running') throw new StaleTransitionError(jobId, 'markSucceeded', current.lifecycleStatus);
  const ours = current.lockedBy === fence.holder && Number(current.leaseVersion) === fence.leaseVersion;
  if (ours && current.cancelRequestedAt !== null) throw new CancelRequestedError(jobId);
  throw new LeaseLostError(jobId, fence.leaseVersion);
}

/**
 * The success claim, as the first statement of the caller's (projection) transaction. Finish with
 * {@link successStatements} in the same transaction.
 * @returns the job as the update left it, or a refusal when it already succeeded
 * @throws as {@link explainRefusedSuccess}
 */
export async function claimSuccess(
  tx: Prisma.TransactionClient, job: AiJob, fence: LeaseFence, result: SuccessResult,
): Promise<AiJob | SuccessRefusal> {
  const now = result.now ?? new Date();
  const update = claimUpdate(job, fence, result, now);
  if (await tx.$executeRawUnsafe(update.sql, ...update.values) === 1) {
    // The `seq` the claim took (the row is ours to the commit): the caller publishes the status entry with it.
    const [row] = await tx.$queryRawUnsafe<{ statusSeq: number }[]>('SELECT statusSeq FROM `AiJob` WHERE id = ?', job.id);
    return { ...succeededJob(job, result, now), statusSeq: Number(row?.statusSeq) };
  }
  const [current] = await tx.$queryRawUnsafe<ClaimState[]>(CLAIM_STATE_SQL, job.id);
  return explainRefusedSuccess(job.id, fence, current);
}

/** A claimed success's audit row and `ai.job.succeeded` event, for the caller to run in the same transaction. */
export function successStatements(succeeded: AiJob, fence: LeaseFence, meta: TransitionMeta): SqlStatement[] {
  return [successAudit(succeeded, fence, meta, currentStatusSeq(succeeded.id)), successEvent(succeeded)];
}

/** The success's audit row (its status entry), its `seq` given as an expression. */
function successAudit(succeeded: AiJob, fence: LeaseFence, meta: TransitionMeta, seq: SqlExpression): SqlStatement {
  return insertStatement('AiJobTransition', {
    id: newId(), jobId: succeeded.id, fromStatus: 'running', toStatus: 'succeeded', actor: meta.actor.slice(0, 128),
    reason: meta.reason?.slice(0, 255) ?? null, errorCode: null, leaseVersion: fence.leaseVersion,
    seq: 0, attempt: succeeded.attemptCount, createdAt: succeeded.finishedAt ?? new Date(),
  }, { seq });
}

/** The `ai.job.succeeded` event's outbox row. */
function successEvent(succeeded: AiJob): SqlStatement {
  const at = succeeded.finishedAt ?? new Date();
  return outboxInsert(buildJobTerminalEvent(succeeded, at), at);
}

/**
 * What only this claim can have written (succeeded, this lease version, this output hash, this finish time), as
 * the condition of a scalar subquery on the job's row.
 */
function claimedWhere(job: AiJob, fence: LeaseFence, result: SuccessResult, now: Date): { sql: string; values: SqlValue[] } {
  return {
    sql: "id = ? AND lifecycleStatus = 'succeeded' AND leaseVersion = ? AND outputHash = ? AND finishedAt = ?",
    values: [job.id, fence.leaseVersion, result.outputHash, now],
  };
}

/**
 * The attempt's last batch of stream chunks, carried ahead of the claim (lib/stream/attempt-stream.ts
 * `FinalAppend`): its fenced append, and the `seq` of its last chunk. That is the job's last `seq` once the append
 * commits: the attempt's earlier appends all have known outcomes when it hands the batch over, and only the
 * lease holder appends to its segment.
 */
export interface FencedChunks {
  statement: SqlStatement;
  lastSeq: number;
}

/** A whole projection as one script, ready for {@link runSuccessScript}. */
export interface SuccessScript {
  statements: SqlStatement[];
  succeeded: AiJob;
  /** The write carried after the guard, if any. */
  carried?: CarriedWrite | undefined;
  /**
   * The claim's `seq`: known before the script runs (a claim carrying its attempt's last batch), or read back by
   * the guard SELECT at this index of `statements` (right after the claim, which then comes first).
   */
  seq: { known: number } | { guardIndex: number };
}

/**
 * The success claim, then a guard, then every business row and artifact of `projection`, the audit row and the
 * event as plain INSERTs. A script cannot branch, and no session variable may carry the claim's outcome (RDS
 * Proxy would pin), so the guard makes the server stop: a SELECT whose scalar subquery returns two rows — error
 * 1242, "Subquery returns more than 1 row" — unless the row holds what only this claim can have written
 * (succeeded, this lease version, this output hash, this finish time). The claim's UPDATE keeps the row locked
 * to the COMMIT. On a refusal nothing after the guard runs and the transaction rolls back; the caller then reads
 * the row to explain it. (Before, each INSERT was an `INSERT … SELECT … WHERE <the claim's values>`: one
 * optimizer pass per row; with the other SELECTs, a quarter of the database's CPU per job in bench:peers.)
 * `carried` (the ledger row of the call that answered) goes right after the guard: it commits with the
 * success, and {@link runSuccessScript} writes it on its own when the claim is refused (the call happened all
 * the same).
 * `preceding` (the attempt's last batch of stream chunks, lib/stream/attempt-stream.ts `handOver`) goes before
 * the claim: it is fenced by the lease and by the `statusSeq` the claim moves, and the claim takes the `seq` after
 * its last chunk without reading the log (lib/jobs/stream-seq.ts); on a refusal it rolls back with everything else
 * (only preview is lost). With the claim's `seq` known so, the guard needs no statement of its own: the audit row
 * goes right after the claim and reads its `seq` from the claimed row (with that `seq`), stopping the script with
 * the same error 1242 when there is none.
 *
 * Undefined when the script's text would be over 16 KB, where RDS Proxy pins a session (a long quiz, say): the
 * caller then takes the transaction path, whose statements are each smaller; one still over 16 KB (a single long
 * artifact) gets its connection closed after the transaction, which ends the pin (lib/db/large-statements.ts). The
 * size is counted in bytes as the driver sends them (`sentTextBytes`, an upper bound of the text with every value
 * quoted and escaped): text in 3-byte UTF-8 (Chinese, Japanese) costs 3 bytes per UTF-16 unit, not 2.
 */
export function successScript(
  job: AiJob, fence: LeaseFence, result: SuccessResult, projection: RowProjection, meta: TransitionMeta, carried?: CarriedWrite,
  preceding?: FencedChunks,
): SuccessScript | undefined {
  const now = result.now ?? new Date();
  const succeeded = succeededJob(job, result, now);
  const claimed = claimedWhere(job, fence, result, now);
  // The guard: a SELECT of its own that also reads the claim's `seq` back; or, when the claim's `seq` is known
  // (the batch's last + 1), the audit row right after the claim, whose `seq` is read from the claimed row with that
  // value and stops the script (the same error 1242) when there is no such row: one statement fewer.
  const seq = preceding ? preceding.lastSeq + 1 : undefined;
  const guard: SqlStatement[] = seq === undefined
    ? [{
      sql: `SELECT (SELECT 1 UNION ALL SELECT 1 FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM \`AiJob\` WHERE ${claimed.sql})) AS claimed, (SELECT statusSeq FROM \`AiJob\` WHERE id = ?) AS statusSeq`,
      values: [...claimed.values, job.id],
    }]
    : [successAudit(succeeded, fence, meta, {
      // The second operand is evaluated only when the first is NULL; it names the row too, so it can stop the script
      // only when the claim did not hold, however early a server evaluates it.
      expression: `COALESCE((SELECT statusSeq FROM \`AiJob\` WHERE ${claimed.sql} AND statusSeq = ?),
        (SELECT 1 UNION ALL SELECT 1 FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM \`AiJob\` WHERE ${claimed.sql} AND statusSeq = ?)))`,
      values: [...claimed.values, seq, ...claimed.values, seq],
    })];
  const statements: SqlStatement[] = [
    ...(preceding ? [preceding.statement] : []),
    claimUpdate(job, fence, result, now, preceding?.lastSeq),
    ...guard,
    ...(carried ? [carried.statement] : []),
    ...rowsByTable(projection.rows),
    ...insertRowsStatements('AiJobArtifact', projection.refs.map((r) => ({
      id: newId(), jobId: job.id, artifactType: r.artifactType, artifactId: r.artifactId, ordinal: r.ordinal, createdAt: now,
    }))),
    ...(seq === undefined ? successStatements(succeeded, fence, meta) : [successEvent(succeeded)]),
  ];
  const { sql, values } = atomicQuery(statements);
  if (sentTextBytes(sql, values) > PROXY_PIN_STATEMENT_BYTES) return undefined;
  return { statements, succeeded, carried, seq: seq === undefined ? { guardIndex: 1 } : { known: seq } };
}

/** A projector's rows as INSERTs, consecutive rows of one table in one statement (in their order). */
function rowsByTable(rows: RowProjection['rows']): SqlStatement[] {
  const statements: SqlStatement[] = [];
  for (let i = 0; i < rows.length;) {
    let j = i + 1;
    while (j < rows.length && rows[j]!.table === rows[i]!.table) j += 1;
    statements.push(...insertRowsStatements(rows[i]!.table, rows.slice(i, j).map((r) => r.values)));
    i = j;
  }
  return statements;
}

/** MySQL/MariaDB ER_SUBQUERY_NO_1_ROW: here only ever the guard of a refused claim. */
const ER_SUBQUERY_NO_1_ROW = 1242;

/**
 * Runs a {@link successScript} as one transaction in one round trip.
 * @returns the succeeded job, or a refusal when the job already succeeded
 * @throws as {@link explainRefusedSuccess}; a failing statement's driver error (everything rolled back)
 */
export async function runSuccessScript(
  job: AiJob, fence: LeaseFence, script: SuccessScript, afterCommit?: () => void,
): Promise<AiJob | SuccessRefusal> {
  const { carried } = script;
  let results: unknown[];
  try {
    results = await runAtomically(script.statements);
  } catch (err) {
    if ((err as { errno?: number } | undefined)?.errno !== ER_SUBQUERY_NO_1_ROW) throw err;
    // Refused (rolled back): bill the call, then say why from the row as it stands (a refusal's reason, once
    // true, stays true: succeeded, cancel requested and a newer lease are never undone).
    if (carried) await carried.write();
    const [current] = (await getSqlPool().query(CLAIM_STATE_SQL, [job.id])) as ClaimState[];
    return explainRefusedSuccess(job.id, fence, current);
  }
  carried?.markWritten();
  const statusSeq = 'known' in script.seq ? script.seq.known : Number((results[script.seq.guardIndex] as { statusSeq: number }[])[0]?.statusSeq);
  const succeeded = { ...script.succeeded, statusSeq };
  afterCommit?.();
  publishStatus(succeeded);
  return succeeded;
}
