/**
 * The user API's Lambda handler: {@link USER_ROUTES} dispatched to {@link USER_OPERATIONS}. Dependencies come
 * from the environment on first use (one set per container); tests and the local runtime may pass their own.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { getPrisma } from '../db/client.ts';
import { jobRegistry } from '../jobs/registry.ts';
import { callerOf } from './auth.ts';
import { createRouter } from './router.ts';
import { USER_ROUTES } from './routes.ts';
import { USER_OPERATIONS, credentialsKmsKeyIdFromEnv, type UserApiDeps } from './user-operations.ts';

export { USER_OPERATIONS, type UserApiDeps } from './user-operations.ts';

export const USER_API_SERVICE = 'api-user';

/** Defaults: the process-wide Prisma client and registry, the wall clock, KMS key id from the environment. */
export function defaultUserApiDeps(): UserApiDeps {
  return {
    db: getPrisma(),
    registry: jobRegistry,
    now: () => new Date(),
    credentialsKmsKeyId: () => credentialsKmsKeyIdFromEnv(),
  };
}

/** The handler; `overrides` replace single dependencies (e.g. a KMS client, a clock). */
export function createUserApiHandler(overrides: Partial<UserApiDeps> = {}, logger = new Logger({ serviceName: USER_API_SERVICE })) {
  let deps: UserApiDeps | undefined;
  return createRouter({
    routes: USER_ROUTES,
    operations: USER_OPERATIONS,
    authenticate: (event) => callerOf(event),
    deps: () => (deps ??= { ...defaultUserApiDeps(), ...overrides }),
    logger,
  });
}
