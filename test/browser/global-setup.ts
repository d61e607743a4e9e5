/**
 * Starts the local runtime every spec shares (./runtime.ts) and hands its URL and database to the specs
 * through the environment. The teardown stops it and drops its database.
 */
import { startRuntime } from './runtime.ts';

export default async function globalSetup(): Promise<() => Promise<void>> {
  const runtime = await startRuntime(`aijobs_browser_${process.pid}`, {}, (line) => {
    if (line.startsWith('console JavaScript') || line.startsWith('admin console')) console.log(line);
  });
  process.env.CONSOLE_BASE_URL = runtime.url;
  process.env.CONSOLE_DATABASE_URL = runtime.databaseUrl;
  process.env.CONSOLE_SQS_ENDPOINT = runtime.sqsEndpoint ?? '';
  return runtime.stop;
}
