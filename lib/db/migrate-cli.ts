/** `npm run db:migrate`: creates the database at DATABASE_URL if missing and applies pending migrations. */
import { databaseUrlFromEnv, parseDatabaseUrl } from './database-url.ts';
import { migrateDatabase } from './migrator.ts';
import { describeConnectionError } from './connection-errors.ts';

const url = databaseUrlFromEnv();
try {
  const result = await migrateDatabase(url);
  const target = `${parseDatabaseUrl(url).host}/${result.database}`;
  if (result.applied.length === 0) console.log(`${target}: up to date (${result.alreadyApplied.length} migrations applied earlier)`);
  for (const name of result.applied) console.log(`${target}: applied ${name}`);
} catch (err) {
  console.error(describeConnectionError(err, url));
  process.exitCode = 1;
}
