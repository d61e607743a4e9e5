/**
 * Provider limits as the stage configures them: per `provider/model` (or `provider/*` for every model of a
 * provider) requests per minute, tokens per minute, calls in flight, and the output bound of one call.
 *
 * Precedence (docs/budgets.md "Setting limits"): the built-in defaults below ← `PROVIDER_LIMITS` (JSON, per
 * stage from CDK context `providerLimits`; locally the environment), merged field by field ← an admin's values
 * set at run time, which live in `ProviderLimit` rows with `source = 'admin'` and win until an admin resets
 * them. Rows with `source = 'config'` follow this configuration: every reservation rewrites them from it.
 *
 * Why these defaults:
 * - DeepSeek publishes no rate limit ("DeepSeek API does NOT constrain user's rate limit"; under load it answers
 *   429 or 503, or holds the request open: https://platform.deepseek.com/api-docs/quick_start/rate_limit), so the
 *   limits are ours: 300 calls a minute is about what the stage's consumers can make at once (50 interactive
 *   + 5 background, calls of ~10 s), 40 in flight keeps some consumers free for the other routes, and the token
 *   budget allows those calls at their reserved bound (prompt + 4096 output). `maxOutputTokens` is DeepSeek's own
 *   default `max_tokens` (4K for deepseek-chat, 32K for deepseek-reasoner, whose output includes its reasoning),
 *   now sent explicitly so the reservation is a true bound.
 * - `openai-compat/*` (any OpenAI-compatible vendor configured by URL): cautious values below the lowest paid
 *   tier of the large vendors; raise them to your account's limits.
 * - `mock/*` (local runtime and tests): high enough never to bind unless a test or `MOCK_AI_*` asks it to.
 */
import { ConfigurationError } from '../config/aws.ts';
import type { ModelRoute } from '../ai/types.ts';
import { InvalidLimitError } from './errors.ts';

/** What one model admits: per minute window, at once, and per call. */
export interface ModelLimits {
  /** Calls admitted per minute window. */
  rpm: number;
  /** Tokens (reserved estimates, then real usage) per minute window. */
  tpm: number;
  /** Calls in flight at once, over every consumer. */
  maxInFlight: number;
  /** `max_tokens` sent with every call (unless the request sets its own): the output part of the estimate. */
  maxOutputTokens: number;
}

/** The fields an admin may change at run time (`maxOutputTokens` is configuration only: it shapes the request). */
export const ADMIN_LIMIT_FIELDS = ['rpm', 'tpm', 'maxInFlight'] as const;
export type AdminLimitField = (typeof ADMIN_LIMIT_FIELDS)[number];

/** Inclusive bounds of each limit; 0 would stop a model for good (use a route change for that). */
export const LIMIT_BOUNDS: Readonly<Record<keyof ModelLimits, { min: number; max: number }>> = {
  rpm: { min: 1, max: 1_000_000 },
  tpm: { min: 1, max: 1_000_000_000 },
  maxInFlight: { min: 1, max: 100_000 },
  maxOutputTokens: { min: 1, max: 1_000_000 },
};

export const DEFAULT_MODEL_LIMITS: Readonly<Record<string, ModelLimits>> = Object.freeze({
  'deepseek/deepseek-chat': { rpm: 300, tpm: 3_000_000, maxInFlight: 40, maxOutputTokens: 4_096 },
  'deepseek/deepseek-reasoner': { rpm: 60, tpm: 3_000_000, maxInFlight: 20, maxOutputTokens: 32_768 },
  'openai-compat/*': { rpm: 60, tpm: 200_000, maxInFlight: 10, maxOutputTokens: 4_096 },
  'mock/*': { rpm: 100_000, tpm: 1_000_000_000, maxInFlight: 10_000, maxOutputTokens: 1_024 },
});

/**
 * One limit as a whole number within {@link LIMIT_BOUNDS}.
 * @throws InvalidLimitError for a non-number, a fraction, 0, a negative or an absurdly large value
 */
export function validLimit(field: keyof ModelLimits, value: unknown): number {
  const bounds = LIMIT_BOUNDS[field];
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new InvalidLimitError(field, 'must be a number');
  if (!Number.isInteger(value)) throw new InvalidLimitError(field, 'must be a whole number');
  if (value < bounds.min || value > bounds.max) throw new InvalidLimitError(field, `must be from ${bounds.min} to ${bounds.max}`);
  return value;
}

/** `provider/model` → route; the model may itself contain `/` (the first `/` separates). */
export function routeOfKey(key: string): ModelRoute {
  const at = key.indexOf('/');
  if (at <= 0 || at === key.length - 1) throw new InvalidLimitError(key, 'must be "provider/model" or "provider/*"');
  return { provider: key.slice(0, at), model: key.slice(at + 1) };
}

/** The configured limits of every model, with `provider/*` entries as fallbacks. */
export class ProviderLimitsConfig {
  readonly #entries: ReadonlyMap<string, ModelLimits>;

  constructor(entries: Readonly<Record<string, ModelLimits>>) {
    for (const [key, limits] of Object.entries(entries)) {
      routeOfKey(key);
      for (const field of Object.keys(LIMIT_BOUNDS) as (keyof ModelLimits)[]) validLimit(field, limits[field]);
    }
    this.#entries = new Map(Object.entries(entries).map(([k, v]) => [k, Object.freeze({ ...v })]));
  }

  /** The route's limits: its exact entry, else its provider's `*` entry, else undefined (an unknown model). */
  limitsFor(route: ModelRoute): ModelLimits | undefined {
    return this.#entries.get(`${route.provider}/${route.model}`) ?? this.#entries.get(`${route.provider}/*`);
  }

  /** Every entry, `provider/model` or `provider/*` → limits. */
  entries(): [string, ModelLimits][] {
    return [...this.#entries];
  }
}

/**
 * {@link DEFAULT_MODEL_LIMITS} with `PROVIDER_LIMITS` merged in, field by field, e.g.
 * `{"deepseek/deepseek-chat":{"rpm":120},"openai-compat/gpt-4o-mini":{"rpm":500,"tpm":200000,"maxInFlight":20,"maxOutputTokens":4096}}`.
 * A new key must give all four fields.
 * @throws ConfigurationError naming the key and the field
 */
export function providerLimitsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ProviderLimitsConfig {
  const raw = env.PROVIDER_LIMITS?.trim();
  const merged: Record<string, ModelLimits> = { ...DEFAULT_MODEL_LIMITS };
  if (!raw) return new ProviderLimitsConfig(merged);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigurationError('PROVIDER_LIMITS', 'must be a JSON object of "provider/model" → limits');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigurationError('PROVIDER_LIMITS', 'must be a JSON object of "provider/model" → limits');
  }
  try {
    for (const [key, given] of Object.entries(parsed as Record<string, unknown>)) {
      routeOfKey(key);
      if (!given || typeof given !== 'object') throw new InvalidLimitError(key, 'must be an object of limits');
      const unknown = Object.keys(given).filter((f) => !(f in LIMIT_BOUNDS));
      if (unknown.length) throw new InvalidLimitError(key, `has unknown fields: ${unknown.join(', ')}`);
      merged[key] = { ...merged[key], ...(given as Partial<ModelLimits>) } as ModelLimits;
      for (const field of Object.keys(LIMIT_BOUNDS) as (keyof ModelLimits)[]) {
        if (merged[key][field] === undefined) throw new InvalidLimitError(`${key}.${field}`, 'is missing (a new key needs every field)');
        try {
          validLimit(field, merged[key][field]);
        } catch (err) {
          if (err instanceof InvalidLimitError) throw new InvalidLimitError(`${key}.${field}`, err.message.slice(field.length + 1));
          throw err;
        }
      }
    }
  } catch (err) {
    if (err instanceof InvalidLimitError) throw new ConfigurationError('PROVIDER_LIMITS', err.message);
    throw err;
  }
  return new ProviderLimitsConfig(merged);
}
