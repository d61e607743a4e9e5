/**
 * Alarms on realtime push, beside ./alarms.ts (same topic): the Event API's HTTP endpoint answering errors
 * (`AWS/AppSync` `5XXError` / `4XXError`, dimension `EventAPIId`: only the backend publishes over HTTP, so a 4XX
 * is our misconfiguration or throttling, https://docs.aws.amazon.com/appsync/latest/eventapi/cw-metrics.html),
 * and the publisher's own EMF counts, which also see timeouts and network failures the service never records.
 * Jobs never fail for these (readers backfill); the alarms say readers are falling back to polling.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import {
  PUBLISH_DROPPED_METRIC, PUBLISH_FAILED_METRIC, REALTIME_PUBLISHER_SERVICE,
} from '../lib/realtime/publisher-from-env.ts';
import type { AddAlarm } from './alarms.ts';

/** Events the publisher lost (failed requests' events, dropped requests) per 5 minutes before it alarms. */
export const REALTIME_LOSS_THRESHOLD = 50;

export function realtimeAlarms(add: AddAlarm, eventApiId: string): void {
  const period = Duration.minutes(5);
  const service = (metricName: string) => new cloudwatch.Metric({
    namespace: 'AWS/AppSync', metricName, dimensionsMap: { EventAPIId: eventApiId }, statistic: 'Sum', period,
  });
  const ours = (metricName: string) => new cloudwatch.Metric({
    namespace: 'AiJobs', metricName, dimensionsMap: { service: REALTIME_PUBLISHER_SERVICE }, statistic: 'Sum', period,
  });
  const atLeastOne = { threshold: 1, comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD };
  add('RealtimePublishServerErrors', service('5XXError'), {
    ...atLeastOne, description: 'AppSync Events answered publishes with 5XX: pushes lost, readers fall back to polling',
  });
  add('RealtimePublishClientErrors', service('4XXError'), {
    ...atLeastOne, description: 'AppSync Events refused publishes (4XX: IAM, payload or throttling): check the publisher role and limits',
  });
  add('RealtimePublishFailures', ours(PUBLISH_FAILED_METRIC), {
    threshold: REALTIME_LOSS_THRESHOLD, description: `More than ${REALTIME_LOSS_THRESHOLD} pushed events lost in 5 minutes (errors, timeouts)`,
  });
  add('RealtimePublishDrops', ours(PUBLISH_DROPPED_METRIC), {
    threshold: REALTIME_LOSS_THRESHOLD, description: `More than ${REALTIME_LOSS_THRESHOLD} pushes dropped in 5 minutes (publisher queue full or too slow)`,
  });
}
