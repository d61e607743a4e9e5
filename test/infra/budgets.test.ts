/**
 * Provider limits and spending-cap defaults per stage: CDK context → the functions' environment, validated at
 * synth with the functions' own parsers.
 */
import { describe, expect, it } from 'vitest';
import { budgetSettings } from '../../infra/budget-config.ts';
import { StageConfigError } from '../../infra/config.ts';
import { synthStack, type Synthesized } from './synth.ts';

const fail = (key: string, reason: string) => new StageConfigError(key, reason);
const settings = (context: Record<string, unknown>) => budgetSettings((key) => context[key], fail);

function envOf(s: Synthesized, name: string): Record<string, string> {
  const fn = Object.entries(s.template.findResources('AWS::Lambda::Function')).find(([id]) => id.startsWith(name))!;
  return fn[1].Properties.Environment.Variables;
}

describe('budget settings', () => {
  it('maps context keys to environment variables, JSON objects as JSON text', () => {
    expect(settings({ providerLimits: { 'deepseek/deepseek-chat': { rpm: 120 } }, spendCapPlatformDayUsd: '500', spendCapUserDayUsd: 'off' })).toEqual({
      PROVIDER_LIMITS: '{"deepseek/deepseek-chat":{"rpm":120}}', SPEND_CAP_PLATFORM_DAY_USD: '500', SPEND_CAP_USER_DAY_USD: 'off',
    });
    expect(settings({})).toEqual({});
  });

  it.each([
    ['providerLimits', { providerLimits: { 'deepseek/deepseek-chat': { rpm: 0 } } }],
    ['providerLimits', { providerLimits: '{not json' }],
    ['providerLimits', { providerLimits: { 'brand-new/model': { rpm: 10 } } }],
    ['spendCapUserMonthUsd', { spendCapUserMonthUsd: '-3' }],
    ['spendCapJobTypeDayUsd', { spendCapJobTypeDayUsd: 'lots' }],
  ])('refuses a bad %s at synth, naming the key', (key, context) => {
    expect(() => settings(context)).toThrow(StageConfigError);
    expect(() => settings(context)).toThrow(new RegExp(`context "${key}"`));
  });

  it('gives the consumers, ApiUser and ApiAdmin the stage\'s values', { timeout: 120_000 }, () => {
    const s = synthStack({ stage: 'budgets', jwtIssuer: 'https://login.example.org/', providerLimits: { 'deepseek/deepseek-chat': { rpm: 120 } }, spendCapPlatformDayUsd: '500' });
    for (const name of ['ConsumerInteractive', 'ConsumerBackground', 'ApiUser', 'ApiAdmin']) {
      expect(envOf(s, name), name).toMatchObject({ PROVIDER_LIMITS: '{"deepseek/deepseek-chat":{"rpm":120}}', SPEND_CAP_PLATFORM_DAY_USD: '500' });
    }
    expect(envOf(s, 'Dispatcher').PROVIDER_LIMITS).toBeUndefined();
  });
});
