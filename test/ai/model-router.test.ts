import { describe, expect, it } from 'vitest';
import { InvalidRoutingTableError, ModelRouter, UnknownModelTierError } from '../../lib/ai/model-router.ts';
import { modelRouterFromEnv, providerConfigFromEnv } from '../../lib/ai/provider-config.ts';
import { ConfigurationError } from '../../lib/config/aws.ts';
import { MOCK_PROVIDER as CREDENTIALS_MOCK_PROVIDER, PLATFORM_KEY_ENV } from '../../lib/credentials/platform-keys.ts';
import { credentialsWith, mockProvider } from './helpers.ts';

const providers = ['a', 'b', 'c'].map((name) => mockProvider(name, 'http://127.0.0.1:1/v1'));
const table = {
  fast: [
    { provider: 'a', model: 'a-small' },
    { provider: 'b', model: 'b-small' },
    { provider: 'c', model: 'c-small' },
  ],
  reasoning: [{ provider: 'b', model: 'b-think' }],
};

describe('ModelRouter', () => {
  it("keeps the table's order and only the providers the credential has a key for", () => {
    const router = new ModelRouter(table, providers);
    expect(router.routesFor('fast', credentialsWith({ c: 'k', a: 'k' }))).toEqual([
      { provider: 'a', model: 'a-small' },
      { provider: 'c', model: 'c-small' },
    ]);
    expect(router.routesFor('reasoning', credentialsWith({ a: 'k' }))).toEqual([]);
    expect(router.providerFor({ provider: 'b', model: 'b-think' }).name).toBe('b');
  });

  it('refuses an unknown tier with a typed error', () => {
    const router = new ModelRouter(table, providers);
    expect(() => router.routesFor('standard', credentialsWith({ a: 'k' }))).toThrow(UnknownModelTierError);
    expect(() => router.routesFor('toString', credentialsWith({ a: 'k' }))).toThrow(UnknownModelTierError);
  });

  it('refuses a table that routes to an unregistered provider or has an empty tier', () => {
    expect(() => new ModelRouter({ fast: [{ provider: 'z', model: 'm' }] }, providers)).toThrow(InvalidRoutingTableError);
    expect(() => new ModelRouter({ fast: [] }, providers)).toThrow(InvalidRoutingTableError);
  });

  it('is not changed by later edits to the table it was built from', () => {
    const own = { fast: [{ provider: 'a', model: 'a-small' }] };
    const router = new ModelRouter(own, providers);
    own.fast[0]!.model = 'edited';
    expect(router.routesFor('fast', credentialsWith({ a: 'k' }))).toEqual([{ provider: 'a', model: 'a-small' }]);
  });
});

describe('providerConfigFromEnv', () => {
  it('routes every tier to DeepSeek by default, at its public base URL', () => {
    const { providers: built, routing } = providerConfigFromEnv({});
    expect(built.map((p) => p.name)).toEqual(['deepseek']);
    expect(built[0]).toMatchObject({ baseURL: 'https://api.deepseek.com' });
    expect(routing).toEqual({
      fast: [{ provider: 'deepseek', model: 'deepseek-chat' }],
      standard: [{ provider: 'deepseek', model: 'deepseek-chat' }],
      reasoning: [{ provider: 'deepseek', model: 'deepseek-reasoner' }],
    });
  });

  it('adds the second OpenAI-compatible provider and then the mock, in that order', () => {
    const env = {
      DEEPSEEK_BASE_URL: 'http://deepseek.internal',
      OPENAI_COMPAT_BASE_URL: 'https://api.openai.com/v1',
      OPENAI_COMPAT_MODEL: 'gpt-4o-mini',
      MOCK_AI_BASE_URL: 'http://127.0.0.1:4010/v1',
      AI_PROVIDER_TIMEOUT_MS: '5000',
    };
    const { providers: built, routing } = providerConfigFromEnv(env);
    expect(built.map((p) => [p.name, (p as { timeoutMs?: number }).timeoutMs])).toEqual([
      ['deepseek', 5000],
      ['openai-compat', 5000],
      ['mock', 5000],
    ]);
    expect(routing.reasoning).toEqual([
      { provider: 'deepseek', model: 'deepseek-reasoner' },
      { provider: 'openai-compat', model: 'gpt-4o-mini' },
      { provider: 'mock', model: 'mock-reasoner' },
    ]);
    expect(modelRouterFromEnv(env).tiers).toEqual(['fast', 'standard', 'reasoning']);
  });

  it('rejects half a second provider, a bad URL and a bad timeout', () => {
    expect(() => providerConfigFromEnv({ OPENAI_COMPAT_BASE_URL: 'https://x.example' })).toThrow(ConfigurationError);
    expect(() => providerConfigFromEnv({ MOCK_AI_BASE_URL: 'not a url' })).toThrow(ConfigurationError);
    expect(() => providerConfigFromEnv({ AI_PROVIDER_TIMEOUT_MS: 'soon' })).toThrow(ConfigurationError);
  });
});

describe('provider names', () => {
  it('match the names lib/credentials gives platform keys under', () => {
    const { providers: built } = providerConfigFromEnv({
      OPENAI_COMPAT_BASE_URL: 'https://api.openai.com/v1',
      OPENAI_COMPAT_MODEL: 'gpt-4o-mini',
      MOCK_AI_BASE_URL: 'http://127.0.0.1:4010/v1',
    });
    const names = built.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining([...Object.keys(PLATFORM_KEY_ENV), CREDENTIALS_MOCK_PROVIDER]));
  });

  it('route local platform jobs to the mock without a DeepSeek key, and to DeepSeek first with one', () => {
    const router = modelRouterFromEnv({ MOCK_AI_BASE_URL: 'http://127.0.0.1:4010/v1' });
    expect(router.routesFor('fast', credentialsWith({ mock: 'mock-key' }))).toEqual([{ provider: 'mock', model: 'mock-chat' }]);
    expect(router.routesFor('reasoning', credentialsWith({ mock: 'mock-key', deepseek: 'sk-1' }))).toEqual([
      { provider: 'deepseek', model: 'deepseek-reasoner' },
      { provider: 'mock', model: 'mock-reasoner' },
    ]);
  });
});
