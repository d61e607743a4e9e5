/**
 * Provider limits and spending-cap defaults per stage: CDK context → the functions' environment, validated at
 * synth with the functions' own parsers; and the budget alarms on what the reaper publishes.
 */
import { describe, expect, it } from 'vitest';
import { budgetSettings } from '../../infra/budget-config.ts';
import { StageConfigError } from '../../infra/config.ts';
import { BUDGET_METRICS, REAPER_METRICS } from '../../lib/capacity/budget-metric-names.ts';
import { COOLDOWN_ALARM_MINUTES, COOLDOWN_QUERY, PLATFORM_SPEND_ALARM_PERCENT } from '../../infra/budget-alarms.ts';
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

  it('gives the consumers, ApiUser, ApiAdmin and the Reaper the stage\'s values', { timeout: 120_000 }, () => {
    const s = synthStack({ stage: 'budgets', jwtIssuer: 'https://login.example.org/', providerLimits: { 'deepseek/deepseek-chat': { rpm: 120 } }, spendCapPlatformDayUsd: '500' });
    for (const name of ['ConsumerInteractive', 'ConsumerBackground', 'ApiUser', 'ApiAdmin', 'Reaper']) {
      expect(envOf(s, name), name).toMatchObject({ PROVIDER_LIMITS: '{"deepseek/deepseek-chat":{"rpm":120}}', SPEND_CAP_PLATFORM_DAY_USD: '500' });
    }
    expect(envOf(s, 'Dispatcher').PROVIDER_LIMITS).toBeUndefined();
  });
});

describe('budget alarms', () => {
  const alarms = (s: Synthesized) => Object.entries(s.template.findResources('AWS::CloudWatch::Alarm'))
    .map(([id, a]): Record<string, any> => ({ id, ...a.Properties }));
  const topicOf = (s: Synthesized) => Object.keys(s.template.findResources('AWS::SNS::Topic'))[0];
  const reaperDimension = [{ Name: 'service', Value: REAPER_METRICS.service }];

  it('alarms on platform spend above 80% of its daily cap, a model in cooldown for 10 minutes, and unsettled reservations', { timeout: 120_000 }, () => {
    const s = synthStack({ stage: 'budgets', jwtIssuer: 'https://login.example.org/' });
    const all = alarms(s);
    const topic = topicOf(s);
    const spend = all.find((a) => a.MetricName === BUDGET_METRICS.platformSpendPercent);
    expect(spend).toMatchObject({
      Namespace: REAPER_METRICS.namespace, Dimensions: reaperDimension, Statistic: 'Maximum', Period: 60,
      Threshold: PLATFORM_SPEND_ALARM_PERCENT, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching', AlarmActions: [{ Ref: topic }],
    });
    const cooldown = all.find((a) => a.id.startsWith('AlarmsModelCooldownOver10Minutes'));
    expect(cooldown).toMatchObject({
      Metrics: [{ Expression: COOLDOWN_QUERY, Period: 60, ReturnData: true }],
      Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: COOLDOWN_ALARM_MINUTES,
      TreatMissingData: 'notBreaching', AlarmActions: [{ Ref: topic }],
    });
    expect(COOLDOWN_QUERY).toBe(`SELECT MIN(ModelInCooldown) FROM SCHEMA("AiJobs", model, service) WHERE service = 'ai-job-reaper' GROUP BY model`);
    expect(cooldown!.DatapointsToAlarm ?? COOLDOWN_ALARM_MINUTES).toBe(COOLDOWN_ALARM_MINUTES); // every minute of the ten
    expect(all.find((a) => a.MetricName === BUDGET_METRICS.holdsExpired)).toMatchObject({
      Namespace: REAPER_METRICS.namespace, Dimensions: reaperDimension, Statistic: 'Sum', Period: 300,
      Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', AlarmActions: [{ Ref: topic }],
    });
  });
});
