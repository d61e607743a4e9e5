/** The local mock provider's options from the environment (`npm start`, README's configuration table). */
import { ConfigurationError } from '../config/aws.ts';
import type { MockAiServerOptions } from './mock-ai-types.ts';

/**
 * Options from the environment, for the local runtime: `MOCK_AI_PORT` (default 0), `MOCK_AI_LATENCY_MS`
 * (default 0), `MOCK_AI_FAILURE_RATE` (0–1, default 0), `MOCK_AI_SCENARIO` (default `ok`; e.g. `cut:20` or
 * `rate_limit_mid:20` to break every streamed answer after 20 tokens), `MOCK_AI_TOKENS_PER_SECOND` (pace of
 * streamed answers; unset or 0: all at once), `MOCK_AI_FIRST_TOKEN_MS` (wait before a streamed answer's first
 * token; default 0), `MOCK_AI_RPM` / `MOCK_AI_TPM` (requests / tokens a minute beyond which the mock answers 429
 * with Retry-After: shared cooldowns, docs/budgets.md; unset: no limit).
 * @throws ConfigurationError for a malformed value
 */
export function mockAiServerOptionsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): MockAiServerOptions {
  const num = (name: string, max: number): number | undefined => {
    const raw = env[name]?.trim();
    if (!raw) return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || value > max) throw new ConfigurationError(name, `must be a number from 0 to ${max}`);
    return value;
  };
  const limit = (name: string): number | undefined => {
    const value = num(name, 1_000_000_000);
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw new ConfigurationError(name, 'must be a whole number from 1');
    return value;
  };
  const rpm = limit('MOCK_AI_RPM');
  const tpm = limit('MOCK_AI_TPM');
  const tokensPerSecond = num('MOCK_AI_TOKENS_PER_SECOND', 100_000);
  const firstTokenDelayMs = num('MOCK_AI_FIRST_TOKEN_MS', 600_000);
  return {
    port: num('MOCK_AI_PORT', 65_535) ?? 0,
    latencyMs: num('MOCK_AI_LATENCY_MS', 600_000) ?? 0,
    failureRate: num('MOCK_AI_FAILURE_RATE', 1) ?? 0,
    ...(env.MOCK_AI_SCENARIO?.trim() ? { scenario: env.MOCK_AI_SCENARIO.trim() } : {}),
    ...(tokensPerSecond !== undefined ? { tokensPerSecond } : {}),
    ...(firstTokenDelayMs !== undefined ? { firstTokenDelayMs } : {}),
    ...(rpm !== undefined || tpm !== undefined ? { rateLimits: { ...(rpm !== undefined ? { rpm } : {}), ...(tpm !== undefined ? { tpm } : {}) } } : {}),
  };
}
