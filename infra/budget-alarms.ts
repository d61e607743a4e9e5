/**
 * Alarms on provider capacity and spend, beside ./alarms.ts (same topic), on what the reaper reads from the
 * shared rows every minute (lib/capacity/budget-metrics.ts, docs/budgets.md "Alarms"):
 * - the platform's spend today above 80% of its daily cap (settled + reserved; the cap an admin set, else the
 *   stage's): time to raise the cap or find who spends — at 100% every platform job is refused;
 * - a model in cooldown for more than 10 minutes: `ModelInCooldown` at 1 in each of 10 consecutive minutes, per
 *   model, through a CloudWatch Metrics Insights query grouped by model (each model its own contributor:
 *   https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/multi-time-series-alarm.html), so the alarm
 *   covers whatever models the stage routes to without naming them;
 * - reservations failing to settle: the sweep had to give back a reservation a consumer never settled (it died
 *   holding it, e.g. killed at its timeout).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { BUDGET_METRICS, MODEL_DIMENSION, REAPER_METRICS } from '../lib/capacity/budget-metric-names.ts';
import type { AddAlarm } from './alarms.ts';

/** The platform's spend today, in percent of its daily cap, above which it alarms. */
export const PLATFORM_SPEND_ALARM_PERCENT = 80;
/** Minutes a model may stay in cooldown before it alarms. */
export const COOLDOWN_ALARM_MINUTES = 10;

/** The Metrics Insights query: each model's cooldown flag, the lowest value of each minute. */
export const COOLDOWN_QUERY = `SELECT MIN(${BUDGET_METRICS.modelInCooldown}) FROM SCHEMA("${REAPER_METRICS.namespace}", ${MODEL_DIMENSION}, service) `
  + `WHERE service = '${REAPER_METRICS.service}' GROUP BY ${MODEL_DIMENSION}`;

export function budgetAlarms(add: AddAlarm): void {
  const minute = Duration.minutes(1);
  const reaper = (metricName: string, statistic: string, period: Duration) => new cloudwatch.Metric({
    namespace: REAPER_METRICS.namespace, metricName, dimensionsMap: { service: REAPER_METRICS.service }, statistic, period,
  });
  add('PlatformSpendNearDailyCap', reaper(BUDGET_METRICS.platformSpendPercent, 'Maximum', minute), {
    threshold: PLATFORM_SPEND_ALARM_PERCENT,
    description: `Platform spend today above ${PLATFORM_SPEND_ALARM_PERCENT}% of its daily cap: at 100% every platform-key job is refused (SPEND_LIMIT_REACHED) until midnight UTC; raise it (PUT /admin-api/ai/budgets/caps) or find who spends (docs/budgets.md)`,
  });
  const cooling = new cloudwatch.MathExpression({ expression: COOLDOWN_QUERY, usingMetrics: {}, period: minute, label: 'Model in cooldown' });
  add('ModelCooldownOver10Minutes', cooling, {
    threshold: 1, evaluationPeriods: COOLDOWN_ALARM_MINUTES, comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    description: `A model has been in cooldown after 429s for ${COOLDOWN_ALARM_MINUTES} minutes: its provider keeps refusing (jobs fall back or wait); check its limits and the provider's status`,
  });
  add('CapacityReservationsNotSettled', reaper(BUDGET_METRICS.holdsExpired, 'Sum', Duration.minutes(5)), {
    threshold: 1, comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    description: 'Provider-capacity reservations expired unsettled and were given back by the sweep: a consumer died holding them (timeouts, crashes)',
  });
}
