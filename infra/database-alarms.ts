/**
 * Alarms on the database and on the consumers' work, beside the queue and function alarms of ./alarms.ts:
 * - Aurora Serverless v2 near its maximum capacity (`ACUUtilization`): jobs will queue on the database;
 * - RDS Proxy near the connections the database allows it (`DatabaseConnections` / `MaxDatabaseConnectionsAllowed`);
 * - sessions pinned by the proxy (`DatabaseConnectionsCurrentlySessionPinned`) beyond the dispatcher's held
 *   claims: a code path reintroduced pinning, so connection pooling is being lost;
 * - a high share of jobs ending `failed` (the engine's `JobsFailed` / `JobsSucceeded` EMF metrics);
 * - consumer invocations close to their Lambda timeout (the next one may be killed mid-job).
 * RDS Proxy publishes per proxy node: connection counts are summed over nodes (`Sum`).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as rds from 'aws-cdk-lib/aws-rds';
import type { QueueName } from '../lib/queue/queue-definitions.ts';
import type { AddAlarm } from './alarms.ts';

/** ACU use, in percent of the stage's maximum, that means the cluster is about to cap. */
export const ACU_UTILIZATION_THRESHOLD_PERCENT = 90;
/** Proxy connections, in percent of what the database allows the proxy. */
export const PROXY_CONNECTIONS_THRESHOLD_PERCENT = 80;
/**
 * Pinned sessions that are expected: the dispatcher's held claims pin its connections (at most 3 per
 * dispatcher, docs/deploy.md "Database access"), and a slow run may overlap the next scheduled one.
 */
export const EXPECTED_PINNED_SESSIONS = 6;
/** Share of finished jobs ending `failed`, in percent, over at least {@link MIN_JOBS_FOR_FAILURE_RATE} jobs. */
export const FAILED_JOB_RATE_THRESHOLD_PERCENT = 20;
export const MIN_JOBS_FOR_FAILURE_RATE = 10;
/** A consumer's longest invocation, as a share of its timeout, that counts as close to it. */
export const DURATION_NEAR_TIMEOUT_RATIO = 0.8;
/** Where the engine publishes its job outcome metrics (Powertools EMF, lib/engine/default-engine-deps.ts). */
export const ENGINE_METRICS = { namespace: 'AiJobs', service: 'ai-job-engine' } as const;

export interface DatabaseAlarmTargets {
  cluster: rds.DatabaseCluster;
  proxyName: string;
}

export interface ConsumerAlarmTarget {
  fn: lambda.IFunction;
  timeoutSeconds: number;
}

/** ACU, proxy connections and pinned sessions. */
export function databaseAlarms(add: AddAlarm, { cluster, proxyName }: DatabaseAlarmTargets): void {
  const fiveMinutes = Duration.minutes(5);
  add('DatabaseCapacityNearMaximum', cluster.metric('ACUUtilization', { statistic: 'Maximum', period: fiveMinutes }), {
    threshold: ACU_UTILIZATION_THRESHOLD_PERCENT, evaluationPeriods: 3,
    description: `Aurora above ${ACU_UTILIZATION_THRESHOLD_PERCENT}% of its maximum ACUs for 15 minutes: raise dbMaxCapacity or find the load`,
  });
  const proxyMetric = (metricName: string, statistic: string) => new cloudwatch.Metric({
    namespace: 'AWS/RDS', metricName, dimensionsMap: { ProxyName: proxyName }, statistic, period: Duration.minutes(1),
  });
  const connections = new cloudwatch.MathExpression({
    label: 'proxy connections, % of allowed',
    expression: '100 * used / allowed',
    usingMetrics: { used: proxyMetric('DatabaseConnections', 'Sum'), allowed: proxyMetric('MaxDatabaseConnectionsAllowed', 'Average') },
    period: Duration.minutes(1),
  });
  add('ProxyConnectionsNearLimit', connections, {
    threshold: PROXY_CONNECTIONS_THRESHOLD_PERCENT, evaluationPeriods: 5,
    description: `RDS Proxy above ${PROXY_CONNECTIONS_THRESHOLD_PERCENT}% of the database connections it may open, 5 minutes running`,
  });
  add('ProxySessionsPinned', proxyMetric('DatabaseConnectionsCurrentlySessionPinned', 'Sum'), {
    threshold: EXPECTED_PINNED_SESSIONS, evaluationPeriods: 5,
    description: `More than ${EXPECTED_PINNED_SESSIONS} pinned proxy sessions for 5 minutes: something other than the dispatcher pins (prepared statements, SET, user variables?)`,
  });
}

/** Failed-job share across the consumers, and each consumer's duration against its timeout. */
export function consumerAlarms(add: AddAlarm, consumers: Record<QueueName, ConsumerAlarmTarget>): void {
  const period = Duration.minutes(5);
  const outcome = (metricName: string) => new cloudwatch.Metric({
    namespace: ENGINE_METRICS.namespace, metricName, dimensionsMap: { service: ENGINE_METRICS.service }, statistic: 'Sum', period,
  });
  const rate = new cloudwatch.MathExpression({
    label: 'failed jobs, % of finished',
    expression: `IF(failed + succeeded >= ${MIN_JOBS_FOR_FAILURE_RATE}, 100 * failed / (failed + succeeded), 0)`,
    usingMetrics: { failed: outcome('JobsFailed'), succeeded: outcome('JobsSucceeded') },
    period,
  });
  add('FailedJobRate', rate, {
    threshold: FAILED_JOB_RATE_THRESHOLD_PERCENT, evaluationPeriods: 3,
    description: `More than ${FAILED_JOB_RATE_THRESHOLD_PERCENT}% of finished jobs failed, 15 minutes running (provider down, bad key, bad prompt?)`,
  });
  for (const [queue, { fn, timeoutSeconds }] of Object.entries(consumers)) {
    const pascal = queue[0]!.toUpperCase() + queue.slice(1);
    const limitMs = Math.round(timeoutSeconds * 1000 * DURATION_NEAR_TIMEOUT_RATIO);
    add(`Consumer${pascal}DurationNearTimeout`, fn.metricDuration({ statistic: 'Maximum', period }), {
      threshold: limitMs,
      description: `A ${queue} consumer invocation ran over ${DURATION_NEAR_TIMEOUT_RATIO * 100}% of its ${timeoutSeconds}s timeout: batch too large or jobs too slow`,
    });
  }
}
