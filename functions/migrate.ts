/**
 * Deploy-time migration Lambda, run by the stack's trigger before any new function code is deployed (see
 * infra/migrations.ts). Applies pending prisma/migrations with the offline runner; the migrations ship in the
 * function's asset, at `MIGRATIONS_DIR`. A failure fails the deployment, which then rolls back.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { ensureDatabaseUrl } from '../lib/config/database-secret.ts';
import { databaseUrlFromEnv } from '../lib/db/database-url.ts';
import { DEFAULT_MIGRATIONS_DIR, migrateDatabase, type MigrationResult } from '../lib/db/migrator.ts';

const logger = new Logger({ serviceName: 'ai-job-migrate' });

export async function handler(): Promise<MigrationResult> {
  await ensureDatabaseUrl();
  const result = await migrateDatabase(databaseUrlFromEnv(), DEFAULT_MIGRATIONS_DIR);
  logger.info('migrations applied', { ...result });
  return result;
}
