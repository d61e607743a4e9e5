/**
 * `npm start`: the whole engine locally on embedded defaults, with the admin console (built first when
 * console/ changed). Prints the console's URL and `listening on http://127.0.0.1:<port>` when ready;
 * Ctrl-C shuts down cleanly.
 *
 * Env: DATABASE_URL (default mysql://root@127.0.0.1:3306/ai_jobs), PORT (3000), REALTIME_PORT (PORT + 1, or a
 * free one when PORT is 0: the realtime hub, AppSync Events' protocol on loopback), SQS_PORT (free),
 * the mock provider's MOCK_AI_* settings (./mock-ai-env.ts: latency, failure rate, scenario, streaming pace —
 * {@link START_TOKENS_PER_SECOND} unless MOCK_AI_TOKENS_PER_SECOND says otherwise, 0 for all at once —,
 * MOCK_AI_RPM / MOCK_AI_TPM beyond which it answers 429: shared cooldowns, docs/budgets.md),
 * DEEPSEEK_API_KEY or OPENAI_COMPAT_BASE_URL + OPENAI_COMPAT_API_KEY (+ OPENAI_COMPAT_MODEL) for a real provider.
 */
import { describeConnectionError } from '../db/connection-errors.ts';
import { databaseUrlFromEnv } from '../db/database-url.ts';
import { ensureConsoleBuilt } from '../../console/scripts/build.ts';
import { startLocalRuntime } from './local-runtime/runtime.ts';
import { mockAiServerOptionsFromEnv } from './mock-ai-env.ts';

/**
 * The mock provider's pace under `npm start` when MOCK_AI_TOKENS_PER_SECOND is unset: slow enough to watch an
 * answer being written (four characters a token: 160 characters a second), fast enough not to wait. Tests and
 * benches start the runtime themselves and set their own pace (the mock's default is all at once).
 */
const START_TOKENS_PER_SECOND = 40;

const env = process.env;
const databaseUrl = databaseUrlFromEnv();
const number = (name: string) => (env[name]?.trim() ? Number(env[name]) : undefined);

try {
  await ensureConsoleBuilt((line) => console.log(line));
  const port = number('PORT') ?? 3000;
  const runtime = await startLocalRuntime({
    databaseUrl,
    port,
    realtimePort: number('REALTIME_PORT') ?? (port === 0 ? 0 : port + 1),
    sqsPort: number('SQS_PORT'),
    mockAi: { tokensPerSecond: START_TOKENS_PER_SECOND, ...mockAiServerOptionsFromEnv(env) },
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
