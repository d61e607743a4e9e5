/**
 * The stage's provider limits and spending-cap defaults (docs/budgets.md), from CDK context, validated at synth
 * with the same parsers the functions use, and handed to the functions as environment variables:
 *
 * | context key                 | environment variable          | default (lib/capacity, lib/spend) |
 * |-----------------------------|-------------------------------|-----------------------------------|
 * | `providerLimits` (JSON)     | `PROVIDER_LIMITS`             | DEFAULT_MODEL_LIMITS              |
 * | `spendCapUserDayUsd`        | `SPEND_CAP_USER_DAY_USD`      | 2                                 |
 * | `spendCapUserMonthUsd`      | `SPEND_CAP_USER_MONTH_USD`    | 20                                |
 * | `spendCapJobTypeDayUsd`     | `SPEND_CAP_JOB_TYPE_DAY_USD`  | 50                                |
 * | `spendCapPlatformDayUsd`    | `SPEND_CAP_PLATFORM_DAY_USD`  | 100                               |
 *
 * A cap's value `off` leaves its scope without a default. E.g. `-c providerLimits='{"deepseek/deepseek-chat":{"rpm":120}}'`
 * or, in cdk.json, `"stages": {"prod": {"providerLimits": {"deepseek/deepseek-chat": {"rpm": 120}}, "spendCapPlatformDayUsd": "500"}}`.
 */
import { ConfigurationError } from '../lib/config/aws.ts';
import { providerLimitsFromEnv } from '../lib/capacity/limits-config.ts';
import { SPEND_CAP_ENV, SPEND_SCOPES, spendCapDefaultsFromEnv, type SpendScope } from '../lib/spend/caps.ts';

/** What the functions get: the environment variables above (only those the stage sets). */
export type BudgetSettings = Readonly<Record<string, string>>;

const CAP_CONTEXT: Readonly<Record<SpendScope, string>> = {
  job_type_day: 'spendCapJobTypeDayUsd', platform_day: 'spendCapPlatformDayUsd', user_day: 'spendCapUserDayUsd', user_month: 'spendCapUserMonthUsd',
};

/**
 * The budget environment of a stage from its context values (`raw(key)`).
 * @throws Error naming the context key when a value does not parse (the message says what is wrong)
 */
export function budgetSettings(raw: (key: string) => unknown, fail: (key: string, reason: string) => Error): BudgetSettings {
  const env: Record<string, string> = {};
  const limits = raw('providerLimits');
  if (limits !== undefined && limits !== '') env.PROVIDER_LIMITS = typeof limits === 'string' ? limits : JSON.stringify(limits);
  for (const scope of SPEND_SCOPES) {
    const value = raw(CAP_CONTEXT[scope]);
    if (value !== undefined && value !== '') env[SPEND_CAP_ENV[scope]] = String(value);
  }
  try {
    providerLimitsFromEnv(env);
  } catch (err) {
    if (err instanceof ConfigurationError) throw fail('providerLimits', err.message.replace(/^PROVIDER_LIMITS /, ''));
    throw err;
  }
  try {
    spendCapDefaultsFromEnv(env);
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err;
    const scope = SPEND_SCOPES.find((s) => err.setting === SPEND_CAP_ENV[s])!;
    throw fail(CAP_CONTEXT[scope], err.message.replace(`${SPEND_CAP_ENV[scope]} `, ''));
  }
  return env;
}
