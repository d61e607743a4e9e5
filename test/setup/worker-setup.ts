/**
 * Per worker: point DATABASE_URL and the AWS endpoints at this worker's resources before any code under
 * test creates a client, and truncate every table before each test.
 */
import { afterAll, beforeEach, inject } from 'vitest';
import { closePrisma } from '../../lib/db/client.ts';
import { closeSqlPool } from '../../lib/db/sql-pool.ts';
import { closeTruncator, truncateAll } from '../helpers/db.ts';

const poolId = Number(process.env.VITEST_POOL_ID ?? 1);
const urls = inject('databaseUrls');
const url = urls[(poolId - 1) % urls.length];
if (!url) throw new Error('global setup provided no test database');
process.env.DATABASE_URL = url;
process.env.AWS_ENDPOINT_URL_SQS = inject('sqsEndpoint');
process.env.AWS_ENDPOINT_URL = inject('awsEndpoint');
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.POWERTOOLS_DEV ??= 'false';
// Handlers log refusals at INFO; tests that check logs build their own logger.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

beforeEach(async () => {
  await truncateAll();
});

afterAll(async () => {
  await closePrisma();
  await closeSqlPool();
  await closeTruncator();
});
