/**
 * The admin routes' operations (SUPER_ADMIN only; the router checks the role before any of these run).
 * Admins see every job, the internal error message, the transition history and usage per attempt.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { AiJob, PrismaDb } from '../db/client.ts';
import { cancellableIn, requestCancel } from '../jobs/cancellation.ts';
import { createJob, type CreateJobDeps } from '../jobs/create-job.ts';
import { CredentialModeNotAllowedError } from '../jobs/creation-errors.ts';
import { InputValidationError, UnknownJobTypeError } from '../jobs/errors.ts';
import type { JobDefinitionRegistry } from '../jobs/registry.ts';
import { findSnapshot } from '../jobs/snapshot-repository.ts';
import { JobNotRetryableError, SnapshotExpiredError } from './http-errors.ts';
import { json, type ApiResult } from './http.ts';
import { adminJobRelations, findJob, listAllJobs } from './job-reads.ts';
import type { AdminJobListQuery, UsageQuery, UserUsageQuery } from './request-schemas.ts';
import { usageReport } from '../rollups/usage-report.ts';
import { reaperReport } from './reaper-report.ts';
import { reaperOptionsFromEnv } from '../engine/reaper-run.ts';
import type { ReaperOptions } from '../engine/reaper.ts';
import { jobIdOf, type OperationContext } from './router.ts';
import type { AdminAction, AdminRoute } from './routes.ts';
import { collectStats, type QueueEndpoint } from './stats.ts';
import { toAdminJobSummary, toAdminJobView } from './views.ts';
import { ADMIN_BUDGET_OPERATIONS, type BudgetSettings } from './budget-operations.ts';

export interface AdminApiDeps {
  db: PrismaDb;
  registry: JobDefinitionRegistry;
  now(): Date;
  /** Passed to createJob for retries (eager dispatch; default: the dispatcher configured from the environment). */
  createJob?: CreateJobDeps;
  /** For queue depths; should give up fast (see createStatsSqsClient). */
  sqs: SQSClient;
  queues: readonly QueueEndpoint[];
  logger: Logger;
  /** The reaper's bounds for its report (default: from the environment, as the reaper reads them). */
  reaperOptions?: ReaperOptions;
  /** Provider limits, routed models and cap defaults for the budget routes (default: from the environment). */
  budgets?: BudgetSettings;
}

type Ctx = OperationContext<AdminApiDeps, AdminRoute>;

/** Only jobs in these states may be retried. */
export const RETRYABLE_STATES: readonly AiJob['lifecycleStatus'][] = ['failed', 'cancelled'];

/** `GET /admin-api/ai/jobs`: filtered by jobType, status, queueName, userId and creation time; newest first. */
async function adminListJobs({ query, deps }: Ctx): Promise<ApiResult> {
  const page = await listAllJobs(deps.db, query as AdminJobListQuery);
  return json(200, { items: page.items.map(({ job, artifacts }) => toAdminJobSummary(job, artifacts)), nextCursor: page.nextCursor });
}

/** `GET /admin-api/ai/jobs/{jobId}`: the admin detail view. */
async function adminGetJob(ctx: Ctx): Promise<ApiResult> {
  const job = await findJob(ctx.deps.db, jobIdOf(ctx));
  return json(200, toAdminJobView(job, await adminJobRelations(ctx.deps.db, job)));
}

/**
 * `POST /admin-api/ai/jobs/{jobId}/retry`: a new job for the same user, type, target and credential, whose
 * input is the parent's snapshot, created through createJob (own snapshot, own outbox row, eager dispatch)
 * with `parentJobId` and `triggerType: 'admin_retry'`. Idempotent per parent (key `retry:<parentId>`): a
 * repeated call returns the first retry with 200 instead of 201. To retry again, retry the retry.
 * @throws JobNotRetryableError unless the job is failed or cancelled and its snapshot is still valid input
 * @throws SnapshotExpiredError (409 SNAPSHOT_EXPIRED) when its snapshot expired or retention deleted it
 */
async function adminRetryJob(ctx: Ctx): Promise<ApiResult> {
  const { db } = ctx.deps;
  const parent = await findJob(db, jobIdOf(ctx));
  if (!RETRYABLE_STATES.includes(parent.lifecycleStatus)) {
    throw new JobNotRetryableError(parent.id, `it is ${parent.lifecycleStatus}; only failed or cancelled jobs can be retried`);
  }
  const snapshot = await findSnapshot(db, parent.id);
  if (!snapshot || (snapshot.expiresAt && snapshot.expiresAt.getTime() <= ctx.deps.now().getTime())) {
    throw new SnapshotExpiredError(parent.id, snapshot?.expiresAt ?? null);
  }
  const { job, created } = await createJob(
    {
      userId: parent.userId, jobType: parent.jobType, triggerType: 'admin_retry',
      targetType: parent.targetType, targetId: parent.targetId, idempotencyKey: `retry:${parent.id}`,
      input: snapshot.content, credentialMode: parent.credentialMode, credentialId: parent.credentialId ?? undefined,
      priority: parent.priority, parentJobId: parent.id,
    },
    { db, registry: ctx.deps.registry, ...ctx.deps.createJob },
  ).catch((err: unknown) => {
    if (err instanceof InputValidationError || err instanceof UnknownJobTypeError || err instanceof CredentialModeNotAllowedError) {
      throw new JobNotRetryableError(parent.id, 'its snapshot is no longer valid input for its job type', { cause: err });
    }
    throw err;
  });
  ctx.deps.logger.info('admin retry', { adminId: ctx.caller.userId, parentJobId: parent.id, jobId: job.id, created });
  return json(created ? 201 : 200, toAdminJobView(job, await adminJobRelations(db, job)), { location: `/admin-api/ai/jobs/${job.id}` });
}

/**
 * `POST /admin-api/ai/jobs/{jobId}/cancel`: the user cancel for any user's job, recorded with the admin as
 * actor (`admin:<id>`) in the transition history. 200 when cancelled now, 202 when requested of a running job.
 */
async function adminCancelJob(ctx: Ctx): Promise<ApiResult> {
  const { db, registry } = ctx.deps;
  const { outcome, job } = await requestCancel(db, jobIdOf(ctx), {
    actor: `admin:${ctx.caller.userId}`, now: ctx.deps.now(), isCancellable: cancellableIn(registry),
  });
  ctx.deps.logger.info('admin cancel', { adminId: ctx.caller.userId, jobId: job.id, outcome });
  return json(outcome === 'cancelled' ? 200 : 202, toAdminJobView(job, await adminJobRelations(db, job)));
}

/** `GET /admin-api/ai/stats`. */
async function adminStats({ deps }: Ctx): Promise<ApiResult> {
  return json(200, await collectStats(deps));
}

/** `GET /admin-api/ai/usage`: per day × job type × model × credential mode (per user when `userId` is given). */
async function adminUsage({ query, deps }: Ctx): Promise<ApiResult> {
  return json(200, await usageReport(deps.db, { ...(query as UsageQuery), perUser: false }, deps.now()));
}

/** `GET /admin-api/ai/usage/users`: the same per user, for the `limit` users with the highest cost. */
async function adminUsageByUser({ query, deps }: Ctx): Promise<ApiResult> {
  const { limit, ...q } = query as UserUsageQuery;
  return json(200, await usageReport(deps.db, { ...q, perUser: true, users: limit }, deps.now()));
}

/** `GET /admin-api/ai/reaper/report`: what the reaper would act on, under its configured bounds. */
async function adminReaperReport({ deps }: Ctx): Promise<ApiResult> {
  return json(200, await reaperReport(deps.db, deps.reaperOptions ?? reaperOptionsFromEnv(), deps.now()));
}

/** One operation per admin action. */
export const ADMIN_OPERATIONS: Record<AdminAction, (ctx: Ctx) => Promise<ApiResult>> = {
  adminListJobs,
  adminGetJob,
  adminRetryJob,
  adminCancelJob,
  adminStats,
  adminUsage,
  adminUsageByUser,
  adminReaperReport,
  ...ADMIN_BUDGET_OPERATIONS,
};
