/**
 * `npm start`: the whole engine locally on embedded defaults, with the admin console (built first when
 * console/ changed). Prints the console's URL and `listening on http://127.0.0.1:<port>` when ready;
 * Ctrl-C shuts down cleanly.
 *
 * Env: DATABASE_URL (default mysql://root@127.0.0.1:3306/ai_jobs), PORT (3000), REALTIME_PORT (PORT + 1: the
 * realtime hub, AppSync Events' protocol on loopback), SQS_PORT (free),
 * the mock provider's MOCK_AI_* settings (./mock-ai-env.ts: latency, failure rate, scenario, streaming pace,
 * MOCK_AI_RPM / MOCK_AI_TPM beyond which it answers 429: shared cooldowns, docs/budgets.md),
 * DEEPSEEK_API_KEY or OPENAI_COMPAT_BASE_URL + OPENAI_COMPAT_API_KEY (+ OPENAI_COMPAT_MODEL) for a real provider.
 */
import { describeConnectionError } from '../db/connection-errors.ts';
import { databaseUrlFromEnv } from '../db/database-url.ts';
import { ensureConsoleBuilt } from '../../console/scripts/build.ts';
import { startLocalRuntime } from './local-runtime/runtime.ts';
import { mockAiServerOptionsFromEnv } from './mock-ai-env.ts';

const env = process.env;
const databaseUrl = databaseUrlFromEnv();
const number = (name: string) => (env[name]?.trim() ? Number(env[name]) : undefined);

try {
  await ensureConsoleBuilt((line) => console.log(line));
  const runtime = await startLocalRuntime({
    databaseUrl,
    port: number('PORT') ?? 3000,
    realtimePort: number('REALTIME_PORT') ?? (number('PORT') ?? 3000) + 1,
    sqsPort: number('SQS_PORT'),
    mockAi: mockAiServerOptionsFromEnv(env),
  });
  console.log(`SQS (fauxqs) at ${runtime.aws.sqsEndpoint}; get a token with: npm run -s token -- --user alice [--admin]`);
  console.log(`admin console: ${runtime.consoleUrl} (one-click local sign-in)`);
  console.log(`listening on ${runtime.url}`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping (in-flight jobs finish or are released)…`);
    runtime.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
} catch (err) {
  console.error(describeConnectionError(err, databaseUrl));
  process.exit(1);
}
