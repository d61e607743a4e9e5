/**
 * Deploy-time migration Lambda, run by the stack's trigger before any new function code is deployed (see
 * infra/migrations.ts). Applies pending prisma/migrations with the offline runner; the migrations ship in the
 * function's asset, at `MIGRATIONS_DIR`. A failure fails the deployment, which then rolls back.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { ensureDatabaseUrl } from '../lib/config/database-secret.ts';
import { databaseUrlFromEnv } from '../lib/db/database-url.ts';
import { CONNECT_RETRY_MS, DEFAULT_MIGRATIONS_DIR, migrateDatabase, type MigrationResult } from '../lib/db/migrator.ts';

const logger = new Logger({ serviceName: 'ai-job-migrate' });

export async function handler(): Promise<MigrationResult> {
  await ensureDatabaseUrl();
  // A cluster created by this same deploy may still be starting: connection errors are retried for ~2 min.
  const result = await migrateDatabase(databaseUrlFromEnv(), DEFAULT_MIGRATIONS_DIR, {
    connectRetryMs: CONNECT_RETRY_MS,
    onConnectRetry: (err, attempt) => logger.warn('database not reachable yet; retrying', { attempt, code: (err as { code?: string }).code }),
  });
  if (result.failedAhead) {
    // This is an older release run by the rollback of a deploy whose migration failed: the stack rolls back,
    // the schema keeps what that migration did before it failed (docs/deploy.md, "When a migration fails").
    logger.warn('a newer release\'s migration failed earlier; this release\'s migrations are all applied', { ...result });
  } else {
    logger.info('migrations applied', { ...result });
  }
  return result;
}
