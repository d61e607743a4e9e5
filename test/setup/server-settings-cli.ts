/** `npm run db:test-server`: gives the MySQL server at DATABASE_URL the stack's sql_mode and UTC (./server-settings.ts). */
import { databaseUrlFromEnv, parseDatabaseUrl } from '../../lib/db/database-url.ts';
import { SQL_MODE } from '../../lib/db/server-settings.ts';
import { pinTestServerSettings } from './server-settings.ts';

const url = databaseUrlFromEnv();
try {
  await pinTestServerSettings(url);
  console.log(`${parseDatabaseUrl(url).host}:${parseDatabaseUrl(url).port}: sql_mode ${SQL_MODE}, UTC`);
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
}
