/**
 * The local runtime as a separate process, for tests that kill it (SIGKILL) and start it again on the same
 * database. Reads DATABASE_URL, MOCK_AI_BASE_URL and AWS_ENDPOINT_URL (EventBridge/KMS on the tests' moto);
 * prints `listening on <url>` when ready. Reaper bounds come from REAPER_* in the environment.
 */
import { startLocalRuntime } from '../../lib/dev/local-runtime/runtime.ts';

const env = process.env;
const runtime = await startLocalRuntime({
  databaseUrl: env.DATABASE_URL ?? '', port: 0, mockAiUrl: env.MOCK_AI_BASE_URL, awsEndpoint: env.AWS_ENDPOINT_URL, useMoto: false,
  timing: { leaseMs: 3_000, heartbeatMs: 500, cancelPollMs: 100 }, dispatchIntervalMs: 200, reaperIntervalMs: 1_000,
  log: (line) => console.log(line),
});
console.log(`listening on ${runtime.url}`);
