/**
 * Deploy-time Lambda, run by the stack's trigger on every deployment before any new function code is deployed
 * (see infra/migrations.ts). First the preflight: it connects through RDS Proxy as the functions do and checks
 * what the code relies on (lib/db/preflight.ts); then it applies pending prisma/migrations with the offline
 * runner (they ship in the function's asset, at `MIGRATIONS_DIR`). A failure of either fails the deployment,
 * which then rolls back, with a message that says what is wrong and what to do.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { ensureDatabaseUrl } from '../lib/config/database-secret.ts';
import { databaseUrlFromEnv } from '../lib/db/database-url.ts';
import { CONNECT_RETRY_MS, DEFAULT_MIGRATIONS_DIR, migrateDatabase, type MigrationResult } from '../lib/db/migrator.ts';
import { preflightDatabaseUrl, type PreflightReport } from '../lib/db/preflight.ts';

const logger = new Logger({ serviceName: 'ai-job-migrate' });

export async function handler(): Promise<MigrationResult & { preflight: PreflightReport }> {
  await ensureDatabaseUrl();
  const url = databaseUrlFromEnv();
  // A cluster created by this same deploy may still be starting: connection errors are retried for ~2 min.
  const retry = {
    connectRetryMs: CONNECT_RETRY_MS,
    onConnectRetry: (err: unknown, attempt: number) => logger.warn('database not reachable yet; retrying', { attempt, code: (err as { code?: string }).code }),
  };
  const preflight = await preflightDatabaseUrl(url, retry);
  logger.info('database preflight passed', { ...preflight });
  const result = await migrateDatabase(url, DEFAULT_MIGRATIONS_DIR, retry);
  if (result.failedAhead) {
    // This is an older release run by the rollback of a deploy whose migration failed: the stack rolls back,
    // the schema keeps what that migration did before it failed (docs/deploy.md, "When a migration fails").
    logger.warn('a newer release\'s migration failed earlier; this release\'s migrations are all applied', { ...result });
  } else {
    logger.info('migrations applied', { ...result });
  }
  return { ...result, preflight };
}
