/**
 * The providers and the routing table, built from the environment.
 *
 * Providers (each an {@link OpenAiCompatibleProvider}):
 *
 * | name            | when                                                    | base URL                                               |
 * |-----------------|---------------------------------------------------------|--------------------------------------------------------|
 * | `deepseek`      | always (users may bring their own DeepSeek key)         | `DEEPSEEK_BASE_URL`, default https://api.deepseek.com  |
 * | `openai-compat` | `OPENAI_COMPAT_BASE_URL` and `OPENAI_COMPAT_MODEL` set  | `OPENAI_COMPAT_BASE_URL`                               |
 * | `mock`          | `MOCK_AI_BASE_URL` set (the local runtime's mock)       | `MOCK_AI_BASE_URL`                                     |
 *
 * `AI_PROVIDER_TIMEOUT_MS` (default 60000) bounds one request to any of them.
 *
 * Routing table, each tier in order of preference (the gateway falls back along it):
 *
 * | tier        | 1st                          | 2nd, if configured                     | last, if the mock is on |
 * |-------------|------------------------------|----------------------------------------|-------------------------|
 * | `fast`      | deepseek / deepseek-chat     | openai-compat / `$OPENAI_COMPAT_MODEL` | mock / mock-chat        |
 * | `standard`  | deepseek / deepseek-chat     | openai-compat / `$OPENAI_COMPAT_MODEL` | mock / mock-chat        |
 * | `reasoning` | deepseek / deepseek-reasoner | openai-compat / `$OPENAI_COMPAT_MODEL` | mock / mock-reasoner    |
 *
 * A route is used only when the job's credential holds a key for its provider (ModelRouter.routesFor). The
 * keys come from lib/credentials (platform: Secrets Manager, or locally `DEEPSEEK_API_KEY`,
 * `OPENAI_COMPAT_API_KEY` and a dummy key for `mock`; users: their own DeepSeek key), so the provider names
 * here must match the names there. Locally, without a DeepSeek key, platform jobs therefore skip `deepseek`
 * and land on the mock; with one, the mock is only the last fallback. Deployed stages leave `MOCK_AI_BASE_URL`
 * unset, so no tier routes to the mock.
 */
import { ConfigurationError } from '../config/aws.ts';
import { ModelRouter, type RoutingTable } from './model-router.ts';
import { DEFAULT_PROVIDER_TIMEOUT_MS, OpenAiCompatibleProvider } from './openai-compatible-provider.ts';
import { DEEPSEEK_PROVIDER, MOCK_PROVIDER, OPENAI_COMPAT_PROVIDER, routingFromEnv } from './routing-table.ts';
import type { AiProvider } from './types.ts';

export { DEEPSEEK_PROVIDER, MOCK_PROVIDER, MODEL_TIERS, OPENAI_COMPAT_PROVIDER, type ModelTier } from './routing-table.ts';

type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_DEEPSEEK_BASE_URL = 'https://api.deepseek.com';

/** Everything the gateway's router is built from. */
export interface ProviderConfig {
  providers: AiProvider[];
  routing: RoutingTable;
}

const setting = (env: Env, name: string): string | undefined => env[name]?.trim() || undefined;

/** The providers and routing table for `env` (see the module comment). @throws ConfigurationError */
export function providerConfigFromEnv(env: Env = process.env): ProviderConfig {
  const timeoutMs = timeoutFromEnv(env);
  const provider = (name: string, baseURL: string) => new OpenAiCompatibleProvider({ name, baseURL: urlSetting(name, baseURL), timeoutMs });
  const { routing, compatUrl, mockUrl } = routingFromEnv(env);
  const providers: AiProvider[] = [provider(DEEPSEEK_PROVIDER, setting(env, 'DEEPSEEK_BASE_URL') ?? DEFAULT_DEEPSEEK_BASE_URL)];
  if (compatUrl) providers.push(provider(OPENAI_COMPAT_PROVIDER, compatUrl));
  if (mockUrl) providers.push(provider(MOCK_PROVIDER, mockUrl));
  return { providers, routing };
}

/** A {@link ModelRouter} over {@link providerConfigFromEnv}. @throws ConfigurationError */
export function modelRouterFromEnv(env: Env = process.env): ModelRouter {
  const { providers, routing } = providerConfigFromEnv(env);
  return new ModelRouter(routing, providers);
}

function timeoutFromEnv(env: Env): number {
  const raw = setting(env, 'AI_PROVIDER_TIMEOUT_MS');
  if (raw === undefined) return DEFAULT_PROVIDER_TIMEOUT_MS;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 100 || value > 900_000) {
    throw new ConfigurationError('AI_PROVIDER_TIMEOUT_MS', 'must be an integer from 100 to 900000');
  }
  return value;
}

function urlSetting(provider: string, value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new ConfigurationError(`base URL of ${provider}`, `must be an http(s) URL`);
  }
  return value;
}
