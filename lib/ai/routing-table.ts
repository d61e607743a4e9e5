/**
 * The routing table from the environment (the table in ./provider-config.ts's comment), without building any
 * provider: what the admin API needs to know which models routes call, without bundling a provider's SDK.
 */
import { ConfigurationError } from '../config/aws.ts';
import type { RoutingTable } from './model-router.ts';
import type { ModelRoute } from './types.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** The model tiers a job definition may name. */
export const MODEL_TIERS = ['fast', 'standard', 'reasoning'] as const;
export type ModelTier = (typeof MODEL_TIERS)[number];

/** Provider names, as routes and lib/credentials (platform key secret, user keys) spell them. */
export const DEEPSEEK_PROVIDER = 'deepseek';
export const OPENAI_COMPAT_PROVIDER = 'openai-compat';
export const MOCK_PROVIDER = 'mock';

/** Models of the providers with fixed model names, per tier. */
const DEEPSEEK_MODELS: Record<ModelTier, string> = { fast: 'deepseek-chat', standard: 'deepseek-chat', reasoning: 'deepseek-reasoner' };
const MOCK_MODELS: Record<ModelTier, string> = { fast: 'mock-chat', standard: 'mock-chat', reasoning: 'mock-reasoner' };

const setting = (env: Env, name: string): string | undefined => env[name]?.trim() || undefined;

/**
 * Tier → routes, and the base URLs of the optional providers it routes to.
 * @throws ConfigurationError when only one of OPENAI_COMPAT_BASE_URL and OPENAI_COMPAT_MODEL is set
 */
export function routingFromEnv(env: Env = process.env): { routing: RoutingTable; compatUrl?: string; mockUrl?: string } {
  const compatUrl = setting(env, 'OPENAI_COMPAT_BASE_URL');
  const compatModel = setting(env, 'OPENAI_COMPAT_MODEL');
  if (Boolean(compatUrl) !== Boolean(compatModel)) {
    throw new ConfigurationError(compatUrl ? 'OPENAI_COMPAT_MODEL' : 'OPENAI_COMPAT_BASE_URL', 'must be set together with the other');
  }
  const mockUrl = setting(env, 'MOCK_AI_BASE_URL');
  const routing = Object.fromEntries(
    MODEL_TIERS.map((tier): [string, ModelRoute[]] => [
      tier,
      [
        { provider: DEEPSEEK_PROVIDER, model: DEEPSEEK_MODELS[tier] },
        ...(compatModel ? [{ provider: OPENAI_COMPAT_PROVIDER, model: compatModel }] : []),
        ...(mockUrl ? [{ provider: MOCK_PROVIDER, model: MOCK_MODELS[tier] }] : []),
      ],
    ]),
  );
  return { routing, ...(compatUrl ? { compatUrl } : {}), ...(mockUrl ? { mockUrl } : {}) };
}

/** Every provider/model a routing table calls, once each, in table order (as ModelRouter.routes). */
export function routedModels(routing: RoutingTable): ModelRoute[] {
  const seen = new Map<string, ModelRoute>();
  for (const r of Object.values(routing).flat()) seen.set(`${r.provider}/${r.model}`, { ...r });
  return [...seen.values()];
}
