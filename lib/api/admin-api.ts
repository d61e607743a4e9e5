/**
 * The admin API's Lambda handler: {@link ADMIN_ROUTES} dispatched to {@link ADMIN_OPERATIONS}, every route
 * behind the SUPER_ADMIN check. Dependencies come from the environment on first use; tests may pass their own.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { getPrisma } from '../db/client.ts';
import { jobRegistry } from '../jobs/registry.ts';
import { ADMIN_OPERATIONS, type AdminApiDeps } from './admin-operations.ts';
import { adminCallerOf } from './auth.ts';
import { createRouter } from './router.ts';
import { ADMIN_ROUTES } from './routes.ts';
import { createStatsSqsClient, queueEndpointsFromEnv } from './stats.ts';

export { ADMIN_OPERATIONS, type AdminApiDeps } from './admin-operations.ts';

export const ADMIN_API_SERVICE = 'api-admin';

/** Defaults: process-wide Prisma client and registry, a fast-failing SQS client, queue URLs from the environment. */
export function defaultAdminApiDeps(logger: Logger): AdminApiDeps {
  return {
    db: getPrisma(),
    registry: jobRegistry,
    now: () => new Date(),
    sqs: createStatsSqsClient(),
    queues: queueEndpointsFromEnv(),
    logger,
  };
}

/** The handler; `overrides` replace single dependencies (e.g. an SQS client, the queue URLs). */
export function createAdminApiHandler(overrides: Partial<AdminApiDeps> = {}, logger = new Logger({ serviceName: ADMIN_API_SERVICE })) {
  let deps: AdminApiDeps | undefined;
  return createRouter({
    routes: ADMIN_ROUTES,
    operations: ADMIN_OPERATIONS,
    authenticate: (event) => adminCallerOf(event),
    deps: () => (deps ??= { ...defaultAdminApiDeps(logger), ...overrides }),
    logger,
  });
}
