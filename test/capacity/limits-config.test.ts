/** Provider limits from the configuration, the token estimate and its money bound. */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/config/aws.ts';
import { DEFAULT_MODEL_LIMITS, providerLimitsFromEnv } from '../../lib/capacity/limits-config.ts';
import { estimatePromptTokens, promptTokensBound } from '../../lib/capacity/token-estimate.ts';
import { assertRoutesConfigured } from '../../lib/capacity/gate.ts';
import { costOf } from '../../lib/ai/pricing.ts';
import { spendCapDefaultsFromEnv } from '../../lib/spend/caps.ts';

describe('PROVIDER_LIMITS', () => {
  it('merges field by field over the defaults, and covers a provider with provider/*', () => {
    const config = providerLimitsFromEnv({ PROVIDER_LIMITS: '{"deepseek/deepseek-chat":{"rpm":120},"openai-compat/*":{"tpm":500000}}' });
    expect(config.limitsFor({ provider: 'deepseek', model: 'deepseek-chat' })).toEqual({ ...DEFAULT_MODEL_LIMITS['deepseek/deepseek-chat'], rpm: 120 });
    expect(config.limitsFor({ provider: 'openai-compat', model: 'anything' })).toMatchObject({ tpm: 500_000, rpm: 60 });
    expect(config.limitsFor({ provider: 'deepseek', model: 'deepseek-coder' })).toBeUndefined();
  });

  it.each([
    ['not JSON', '{rpm'], ['an array', '[]'], ['0', '{"deepseek/deepseek-chat":{"rpm":0}}'], ['a negative', '{"mock/*":{"tpm":-1}}'],
    ['a string', '{"mock/*":{"maxInFlight":"ten"}}'], ['absurdly large', '{"mock/*":{"rpm":1e12}}'], ['an unknown field', '{"mock/*":{"burst":5}}'],
    ['a new model without every field', '{"other/model":{"rpm":5}}'], ['a key without a model', '{"deepseek":{"rpm":5}}'],
  ])('refuses %s naming PROVIDER_LIMITS', (_, value) => {
    expect(() => providerLimitsFromEnv({ PROVIDER_LIMITS: value })).toThrow(ConfigurationError);
  });

  it('names the key and field in the refusal', () => {
    expect(() => providerLimitsFromEnv({ PROVIDER_LIMITS: '{"deepseek/deepseek-chat":{"rpm":0}}' })).toThrow('PROVIDER_LIMITS deepseek/deepseek-chat.rpm must be from 1 to 1000000');
  });
});

describe('start-up checks', () => {
  const options = { limits: providerLimitsFromEnv({}), caps: spendCapDefaultsFromEnv({}), price: costOf };

  it('refuses an unpriced model while a cap is on, and a model without limits', () => {
    expect(() => assertRoutesConfigured([{ provider: 'openai-compat', model: 'unpriced-model' }], options)).toThrow(/price of openai-compat\/unpriced-model/);
    expect(() => assertRoutesConfigured([{ provider: 'other', model: 'm' }], options)).toThrow(/limits of other\/m/);
    expect(() => assertRoutesConfigured([{ provider: 'deepseek', model: 'deepseek-chat' }, { provider: 'mock', model: 'mock-chat' }], options)).not.toThrow();
  });

  it('lets an unpriced model run when every cap is off', () => {
    const off = spendCapDefaultsFromEnv({ SPEND_CAP_USER_DAY_USD: 'off', SPEND_CAP_USER_MONTH_USD: 'off', SPEND_CAP_JOB_TYPE_DAY_USD: 'off', SPEND_CAP_PLATFORM_DAY_USD: 'off' });
    expect(() => assertRoutesConfigured([{ provider: 'openai-compat', model: 'unpriced-model' }], { ...options, caps: off })).not.toThrow();
  });

  it('refuses a malformed cap default', () => {
    for (const bad of ['0', '-1', 'lots', '1e9']) expect(() => spendCapDefaultsFromEnv({ SPEND_CAP_USER_DAY_USD: bad })).toThrow(ConfigurationError);
  });
});

describe('token estimates', () => {
  const messages = [{ role: 'system' as const, content: 'You grade.' }, { role: 'user' as const, content: 'Entropy grows — ça augmente.' }];

  it('estimates four characters a token plus the chat template per message', () => {
    expect(estimatePromptTokens(messages)).toBe(Math.ceil(10 / 4) + 4 + Math.ceil(28 / 4) + 4);
  });

  it('bounds the tokens of any byte-level tokenizer by the UTF-8 bytes plus the template', () => {
    expect(promptTokensBound(messages)).toBe(16 + (10 + 16) + (Buffer.byteLength(messages[1]!.content) + 16));
    expect(promptTokensBound(messages)).toBeGreaterThan(estimatePromptTokens(messages));
  });
});
