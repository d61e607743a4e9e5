/**
 * The user routes' operations. Each gets a validated route, caller, path and query from the router and
 * validates its own header and body before touching the database. Every job lookup is owner-scoped
 * (./job-reads.ts): another user's job is JOB_NOT_FOUND.
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import { allowsUserKeys } from './job-credentials.ts';
import { spendCapDefaultsFromEnv, type SpendCapDefaults } from '../spend/caps.ts';
import type { SpendAdmission } from '../spend/admission.ts';
import { ConfigurationError } from '../config/aws.ts';
import { CredentialNotFoundError } from '../credentials/errors.ts';
import { getActiveUserKeyInfo, revokeUserKey, storeUserKey, type UserKeyProvider } from '../credentials/user-credential-repository.ts';
import type { PrismaDb } from '../db/client.ts';
import { cancellableIn, requestCancel } from '../jobs/cancellation.ts';
import { isDeadlock } from '../db/connection-errors.ts';
import { retryOnDeadlock } from '../db/sql-pool.ts';
import { createJob, type CreateJobDeps, type CreateJobInput } from '../jobs/create-job.ts';
import { parseJobInput } from '../jobs/definition.ts';
import type { JobDefinitionRegistry } from '../jobs/registry.ts';
import { createWithinLimits, readCreationPreflight } from './creation-limits.ts';
import { getSqlPool } from '../db/sql-pool.ts';
import { JobResultNotAvailableError, TooManyKeyWritesError } from './http-errors.ts';
import { json, jsonBody, noContent, optionalHeader, parseField, type ApiResult } from './http.ts';
import { findOwnedJob, listUserJobs, withArtifacts } from './job-reads.ts';
import { JOB_RESULT_READERS } from './job-results.ts';
import { idempotencyKeySchema, putCredentialBodySchema, type UserJobListQuery } from './request-schemas.ts';
import { jobIdOf, routeField, RouteWiringError, type OperationContext } from './router.ts';
import type { UserAction, UserRoute } from './routes.ts';
import { toPublicJobView } from './views.ts';
import { userSpend } from './budget-operations.ts';
import { realtimeConfigFor, realtimeEndpointFromEnv } from '../realtime/realtime-config.ts';

export interface UserApiDeps {
  db: PrismaDb;
  registry: JobDefinitionRegistry;
  now(): Date;
  /** Passed to createJob (eager dispatch after commit; default: the dispatcher configured from the environment). */
  createJob?: CreateJobDeps;
  kms?: KMSClient;
  /** The KMS key that wraps user keys (`CREDENTIALS_KMS_KEY_ID`). @throws ConfigurationError when unset */
  credentialsKmsKeyId(): string;
  /** The stage's default spending caps (lib/spend/caps.ts); default: from the environment. */
  spendCaps?: SpendCapDefaults;
  /** The realtime publish endpoint (lib/realtime/realtime-config.ts); default: REALTIME_HTTP_ENDPOINT; null: none. */
  realtimeHttpEndpoint?: string | null;
}

type Ctx = OperationContext<UserApiDeps, UserRoute>;

/** The job a user's job is about: the user themself (the body is exactly the job type's input, nothing else). */
const USER_TARGET_TYPE = 'user';

/**
 * `POST /api/ai/<job-type collection>`: validates the body with the job type's input schema, then createJob with
 * eager dispatch, the limits' guard first in its transaction and the user's key if stored. 202 with the status
 * response and `Location`. `Idempotency-Key`: a replay returns the first job even when a limit is now reached.
 */
async function createUserJob({ event, route, caller, deps }: Ctx): Promise<ApiResult> {
  const def = deps.registry.get(routeField(route, 'jobType'));
  const idempotencyKey = optionalHeader(event, 'idempotency-key', idempotencyKeySchema);
  const input = jsonBody(event);
  parseJobInput(def, input);
  const userId = caller.userId;
  const now = deps.now();
  const request: CreateJobInput = {
    userId, jobType: def.jobType, triggerType: 'user', targetType: USER_TARGET_TYPE, targetId: userId, idempotencyKey, input,
    userKeyIfStored: allowsUserKeys(def),
  };
  const createDeps: CreateJobDeps = { db: deps.db, registry: deps.registry, ...deps.createJob };
  const spend: SpendAdmission = {
    userId, jobType: def.jobType, defaults: deps.spendCaps ?? spendCapDefaultsFromEnv(),
    credential: request.userKeyIfStored ? 'user_key_if_stored' : def.credential.defaultMode === 'user_deepseek_key' ? 'user_key' : 'platform',
  };
  // Within the limits (nearly always) this is one round trip: the limits' guard (job counts and spending caps),
  // then the job, on the user's key if one is stored, with its rows.
  const { job, created } = await createWithinLimits(userId, def, now, {
    create: (guard) => createJob(guard ? { ...request, guard } : request, createDeps),
    counts: () => readCreationPreflight(getSqlPool(), userId, def, now, { idempotencyKey, spend }),
  }, spend);
  const { artifacts } = created ? { artifacts: [] } : await withArtifacts(deps.db, job);
  const headers: Record<string, string> = { location: `/api/ai/jobs/${job.id}` };
  if (!created) headers['idempotent-replayed'] = 'true';
  return json(202, toPublicJobView(job, artifacts), headers);
}

/** `GET /api/ai/jobs/{jobId}`: the frozen JobStatusResponse. */
async function getJob(ctx: Ctx): Promise<ApiResult> {
  const job = await findOwnedJob(ctx.deps.db, jobIdOf(ctx), ctx.caller.userId);
  const { artifacts } = await withArtifacts(ctx.deps.db, job);
  return json(200, toPublicJobView(job, artifacts));
}

/** `GET /api/ai/jobs`: the caller's jobs, newest first, filtered by status and type. */
async function listJobs({ caller, query, deps }: Ctx): Promise<ApiResult> {
  const page = await listUserJobs(deps.db, caller.userId, query as UserJobListQuery);
  return json(200, { items: page.items.map(({ job, artifacts }) => toPublicJobView(job, artifacts)), nextCursor: page.nextCursor });
}

/** `POST /api/ai/jobs/{jobId}/cancel`: 200 when cancelled now (queued), 202 when requested (running). */
async function cancelJob(ctx: Ctx): Promise<ApiResult> {
  const { userId } = ctx.caller;
  // requestCancel re-reads the job each time; a deadlock victim wrote nothing, so running it again is safe.
  const { outcome, job } = await retryOnDeadlock(
    () => requestCancel(ctx.deps.db, jobIdOf(ctx), { actor: `api:${userId}`, ownerId: userId, now: ctx.deps.now(), isCancellable: cancellableIn(ctx.deps.registry) }),
    isDeadlock, 4,
  );
  return json(outcome === 'cancelled' ? 200 : 202, toPublicJobView(job, []));
}

/** `GET /api/ai/<job-type collection>/{jobId}`: the business rows a succeeded job of that type wrote. */
async function getJobResult(ctx: Ctx): Promise<ApiResult> {
  const jobType = routeField(ctx.route, 'jobType');
  const job = await findOwnedJob(ctx.deps.db, jobIdOf(ctx), ctx.caller.userId, jobType);
  if (job.lifecycleStatus !== 'succeeded') throw new JobResultNotAvailableError(job.id, job.lifecycleStatus);
  const reader = JOB_RESULT_READERS.get(jobType);
  if (!reader) throw new RouteWiringError(ctx.route.operationId, 'result reader');
  return json(200, await reader.read(ctx.deps.db, job));
}

/** `GET /api/ai/credentials/<provider>`: the active key's fingerprint, or 404 CREDENTIAL_NOT_FOUND. */
async function getCredential({ route, caller, deps }: Ctx): Promise<ApiResult> {
  const provider = routeField(route, 'provider');
  const info = await getActiveUserKeyInfo(deps.db, caller.userId, provider);
  if (!info) throw new CredentialNotFoundError(provider);
  return json(200, { provider: info.provider, fingerprint: info.fingerprint, createdAt: info.createdAt.toISOString() });
}

/** `PUT /api/ai/credentials/<provider>`: encrypts and stores the key; the response shows its fingerprint only. */
async function putCredential({ event, route, caller, deps }: Ctx): Promise<ApiResult> {
  const provider = routeField(route, 'provider') as UserKeyProvider;
  const { apiKey } = parseField(putCredentialBodySchema, jsonBody(event), 'body');
  await assertKeyWritesWithinLimit(deps.db, caller.userId, deps.now());
  const kmsKeyId = deps.credentialsKmsKeyId();
  const stored = await storeUserKey(deps.db, { userId: caller.userId, provider, apiKey, kmsKeyId }, { kms: deps.kms });
  return json(200, { provider, fingerprint: stored.fingerprint, createdAt: stored.createdAt.toISOString() });
}

/** `DELETE /api/ai/credentials/<provider>`: 204, or 404 CREDENTIAL_NOT_FOUND when no key is active. */
async function deleteCredential({ route, caller, deps }: Ctx): Promise<ApiResult> {
  await revokeUserKey(deps.db, caller.userId, routeField(route, 'provider'));
  return noContent();
}

/** `GET /api/ai/realtime`: where to subscribe to the caller's jobs, or `available: false`. No database read. */
async function getRealtimeConfig({ caller, deps }: Ctx): Promise<ApiResult> {
  const endpoint = deps.realtimeHttpEndpoint === undefined ? realtimeEndpointFromEnv() : (deps.realtimeHttpEndpoint ?? undefined);
  return json(200, realtimeConfigFor(caller.userId, endpoint));
}

/** Keys one user may store within an hour (any provider). */
export const MAX_KEY_WRITES_PER_HOUR = 10;

/**
 * Refuses a key store past {@link MAX_KEY_WRITES_PER_HOUR} in the last hour, before KMS is called: each store
 * costs a KMS data key and leaves a row (the replaced key is revoked, and deleted by retention later). One
 * indexed read (userId, createdAt). Soft, like the job limits: concurrent stores at the edge may all pass.
 * @throws TooManyKeyWritesError with Retry-After until the oldest store of the hour leaves it
 */
async function assertKeyWritesWithinLimit(db: PrismaDb, userId: string, now: Date): Promise<void> {
  const since = new Date(now.getTime() - 3_600_000);
  const where = { userId, createdAt: { gte: since } };
  const n = await db.userModelCredential.count({ where });
  if (n < MAX_KEY_WRITES_PER_HOUR) return;
  // Free again once the count of the hour drops below the limit: when the store that is (n − limit + 1)-th oldest
  // leaves the hour (concurrent stores at the edge may have taken n past the limit).
  const [frees] = await db.userModelCredential.findMany({
    where, orderBy: { createdAt: 'asc' }, skip: n - MAX_KEY_WRITES_PER_HOUR, take: 1, select: { createdAt: true },
  });
  const freeAt = (frees?.createdAt ?? now).getTime() + 3_600_000;
  throw new TooManyKeyWritesError(MAX_KEY_WRITES_PER_HOUR, Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000)));
}

/** `GET /api/ai/spend`: the caller's spend against their caps (lib/api/budget-operations.ts). */
const getSpend = ({ caller, deps }: Ctx): Promise<ApiResult> => userSpend(caller, deps.spendCaps ?? spendCapDefaultsFromEnv());

/** One operation per user action. */
export const USER_OPERATIONS: Record<UserAction, (ctx: Ctx) => Promise<ApiResult>> = {
  createJob: createUserJob,
  getJob,
  listJobs,
  cancelJob,
  getJobResult,
  getCredential,
  putCredential,
  deleteCredential,
  getSpend,
  getRealtimeConfig,
};

/** `CREDENTIALS_KMS_KEY_ID`, read when a credential is stored (so other routes work without it). */
export function credentialsKmsKeyIdFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const value = env.CREDENTIALS_KMS_KEY_ID?.trim();
  if (!value) throw new ConfigurationError('CREDENTIALS_KMS_KEY_ID', 'is not set');
  return value;
}
