/**
 * The one way to create a job (ADR-003 §2.4, seed #289): definition lookup → input validated by the
 * definition's schema → snapshot redacted → content hash → ONE transaction writing the job (`queued`,
 * metadata copied from the definition), its snapshot and its `ai.job.enqueue` outbox row → eager dispatch
 * of that row after commit. Idempotent on (userId, jobType, idempotencyKey).
 *
 * Invariant: nothing is written unless all three rows are; a failed validation writes nothing. The job's first
 * transition row is its `queued` status entry (`seq` 1), published once committed.
 */
import { getPrisma, type AiJob, type PrismaDb } from '../db/client.ts';
import type { CredentialMode } from '../db/generated/enums.ts';
import { newId } from '../db/ids.ts';
import { isDeadlock } from '../db/connection-errors.ts';
import { isDuplicateKey, retryOnDeadlock, runAtomically } from '../db/sql-pool.ts';
import type { SqlExpression, SqlStatement } from '../db/sql.ts';
import { ACTIVE_USER_KEY_ID_SQL } from '../credentials/user-credential-repository.ts';
import { hashCanonical } from './canonical-json.ts';
import { maxAttemptsOf, parseJobInput, type JobDefinition } from './definition.ts';
import { redactSnapshot } from './redaction.ts';
import { jobRegistry, type JobDefinitionRegistry } from './registry.ts';
import { queuedJobInsert, type NewJobRow } from './lifecycle-repository.ts';
import { snapshotInsert } from './snapshot-repository.ts';
import { CredentialModeNotAllowedError, IdempotencyConflictError } from './creation-errors.ts';
import { buildEnqueueEvent, outboxInsert } from '../outbox/outbox-writer.ts';
import { dispatchClaimedOutboxEvent, dispatchOutboxEventById, eagerClaim } from '../outbox/dispatcher.ts';
import { defaultDispatcherDeps, type DispatcherDeps } from '../outbox/dispatcher-deps.ts';
import type { DispatchRow } from '../outbox/outbox-claims.ts';
import { publishStatus } from '../stream/status-entries.ts';

const IDEMPOTENCY_INDEX = 'AiJob_userId_jobType_idempotencyKey_key';

export interface CreateJobInput {
  userId: string;
  jobType: string;
  /** What started the job: `user`, `system`, `admin_retry`, … */
  triggerType: string;
  targetType: string;
  targetId: string;
  /** When given, creating again with the same key returns the first job. */
  idempotencyKey?: string;
  input: unknown;
  credentialMode?: CredentialMode;
  credentialId?: string;
  priority?: number;
  parentJobId?: string;
  /**
   * Run the job on the user's active DeepSeek key when one is stored, else on the definition's default mode; read
   * inside the creating transaction, so the job records the key that was active when it was created. Excludes
   * `credentialMode` and `credentialId`; the type must allow `user_deepseek_key`.
   */
  userKeyIfStored?: boolean;
  /**
   * A statement run first in the creating transaction. When it fails, nothing is written and its error is thrown
   * (the API's per-user limits: lib/api/creation-limits.ts `limitsGuard`).
   */
  guard?: SqlStatement;
}

export interface CreateJobResult {
  job: AiJob;
  /** false when an earlier job with the same idempotency key was returned. */
  created: boolean;
}

export interface CreateJobDeps {
  /** For the idempotency lookup; the creating transaction runs on the raw pool (lib/db/sql-pool.ts). */
  db?: PrismaDb;
  registry?: JobDefinitionRegistry;
  /**
   * Sends the new outbox row right after commit. Must not throw; failures are left to the scheduled dispatcher.
   * Default (undefined): the row is inserted already claimed for this process's eager dispatch, which sends it
   * with {@link dispatchClaimedOutboxEvent} (no claim or lookup round trip). A function gets a `pending` row to
   * claim itself; null: no eager dispatch (the scheduled dispatcher sends it).
   */
  eagerDispatch?: ((outboxEventId: string) => Promise<unknown>) | null;
  /** The dispatcher of the default eager dispatch (default: configured from the environment). */
  dispatcher?: DispatcherDeps;
}

/** Attempts of the creating transaction when it is chosen as a deadlock victim; then the error reaches the API (503). */
const DEADLOCK_ATTEMPTS = 4;

/**
 * Creates a job, or returns the existing one for a repeated idempotency key.
 * @throws UnknownJobTypeError, InputValidationError, CredentialModeNotAllowedError, IdempotencyConflictError
 */
export async function createJob(req: CreateJobInput, deps: CreateJobDeps = {}): Promise<CreateJobResult> {
  const db = deps.db ?? getPrisma();
  const def = (deps.registry ?? jobRegistry).get(req.jobType);
  const input = parseJobInput(def, req.input);
  const credentialMode = pickCredentialMode(def, req.credentialMode);
  const userKey = req.userKeyIfStored === true;
  if (userKey) {
    if (req.credentialMode !== undefined || req.credentialId !== undefined) throw new TypeError('userKeyIfStored excludes credentialMode and credentialId');
    if (!def.credential.allowedModes.includes('user_deepseek_key')) throw new CredentialModeNotAllowedError(def.jobType, 'user_deepseek_key');
  }
  const inputHash = hashCanonical(input);

  const snapshot = redactSnapshot(input);
  const now = new Date();
  const jobId = newId();
  const event = buildEnqueueEvent({ jobId, queueName: def.queue.queueName, messageGroupId: def.queue.messageGroup === 'user' ? req.userId : jobId });
  const dispatcher = deps.eagerDispatch === undefined ? eagerDispatcher(deps.dispatcher) : undefined;
  const claim = dispatcher ? eagerClaim(dispatcher, dispatcher.policy.now()) : undefined;
  const { job, statements } = queuedJobInsert(
    jobRow(jobId, req, def, inputHash, credentialMode), { actor: `${req.triggerType}:${req.userId}`, reason: 'created' }, now,
    userKey ? userKeyColumns(req.userId, credentialMode) : {},
  );
  if (req.guard) statements.unshift(req.guard);
  statements.push(
    snapshotInsert({
      jobId, schemaVersion: def.input.schemaVersion, content: snapshot.content, contentHash: hashCanonical(snapshot.content),
      redactionVersion: snapshot.redactionVersion, expiresAt: snapshotExpiry(def, now),
    }, now),
    outboxInsert(event, now, claim),
  );
  if (userKey) statements.push({ sql: 'SELECT credentialMode, credentialId FROM `AiJob` WHERE id = ?', values: [jobId] });
  let results: unknown[];
  try {
    // Insert first, look up only on a duplicate key: one round trip on the common path. A hit writes nothing
    // (the whole transaction rolls back), and the loser of a concurrent race returns the winner.
    // A deadlock victim wrote nothing (the server rolled the whole transaction back): run it again, bounded.
    results = await retryOnDeadlock(() => runAtomically(statements), isDeadlock, DEADLOCK_ATTEMPTS);
  } catch (err) {
    if (req.idempotencyKey === undefined || !isDuplicateKey(err, IDEMPOTENCY_INDEX)) throw err;
    const winner = await findByIdempotencyKey(db, req, inputHash);
    if (winner) return { job: winner, created: false };
    throw err;
  }
  publishStatus(job); // the `queued` entry, `seq` 1: committed
  if (userKey) {
    // The credential as stored: the key the server found, or the default mode.
    const [stored] = results.at(-1) as Pick<AiJob, 'credentialMode' | 'credentialId'>[];
    job.credentialMode = stored!.credentialMode;
    job.credentialId = stored!.credentialId;
  }
  if (dispatcher && claim) {
    const row = { ...event, payload: event.payload as DispatchRow['payload'], queueName: event.queueName ?? null, messageGroupId: event.messageGroupId ?? null, attemptCount: 0, lockedBy: claim.holder, lockedAt: now };
    await dispatchClaimedOutboxEvent(row, { jobType: job.jobType, createdAt: job.createdAt }, dispatcher);
  } else if (deps.eagerDispatch) {
    await deps.eagerDispatch(event.id);
  } else if (deps.eagerDispatch === undefined) {
    await dispatchOutboxEventById(event.id); // the dispatcher could not be configured: this logs why and leaves the row pending
  }
  return { job, created: true };
}

/** The eager dispatcher, or undefined when it cannot be configured (the row is then left `pending`). */
function eagerDispatcher(given: DispatcherDeps | undefined): DispatcherDeps | undefined {
  try {
    return given ?? defaultDispatcherDeps();
  } catch {
    return undefined;
  }
}

async function findByIdempotencyKey(db: PrismaDb, req: CreateJobInput, inputHash: string): Promise<AiJob | null> {
  const key = req.idempotencyKey as string;
  const existing = await db.aiJob.findUnique({
    where: { userId_jobType_idempotencyKey: { userId: req.userId, jobType: req.jobType, idempotencyKey: key } },
  });
  if (existing && existing.inputHash !== inputHash) throw new IdempotencyConflictError(existing.id, key);
  return existing;
}

/**
 * The credential columns of a job that runs on the user's active key when one is stored: both computed by the
 * server from the same subquery, so the mode and the key id always agree.
 */
function userKeyColumns(userId: string, defaultMode: CredentialMode): Record<'credentialMode' | 'credentialId', SqlExpression> {
  return {
    credentialMode: { expression: `IF(${ACTIVE_USER_KEY_ID_SQL} IS NULL, ?, 'user_deepseek_key')`, values: [userId, defaultMode] },
    credentialId: { expression: ACTIVE_USER_KEY_ID_SQL, values: [userId] },
  };
}

/** When the snapshot expires: creation + the job type's `retention.snapshotDays` (ADR-003 §8.4). */
export function snapshotExpiry(def: Pick<JobDefinition, 'retention'>, now: Date): Date {
  return new Date(now.getTime() + def.retention.snapshotDays * 86_400_000);
}

function pickCredentialMode(def: JobDefinition, requested: CredentialMode | undefined): CredentialMode {
  const mode = requested ?? def.credential.defaultMode;
  if (!def.credential.allowedModes.includes(mode)) throw new CredentialModeNotAllowedError(def.jobType, mode);
  return mode;
}

function jobRow(id: string, req: CreateJobInput, def: JobDefinition, inputHash: string, credentialMode: CredentialMode): NewJobRow {
  return {
    id, userId: req.userId, jobType: def.jobType, triggerType: req.triggerType,
    targetType: req.targetType, targetId: req.targetId, idempotencyKey: req.idempotencyKey ?? null, inputHash,
    queueName: def.queue.queueName, priority: req.priority ?? def.queue.defaultPriority,
    maxAttempts: maxAttemptsOf(def), timeoutMs: def.execution.timeoutMs,
    inputSchemaVersion: def.input.schemaVersion, outputSchemaVersion: def.output.schemaVersion,
    promptKey: def.prompt.key, promptVersion: def.prompt.version, modelTier: def.model.tier,
    credentialMode, credentialId: req.credentialId ?? null, parentJobId: req.parentJobId ?? null,
  };
}
