/**
 * Alarms, all to one SNS topic (with an email subscription when `alarmEmail` is set):
 * - a dead-letter queue holds any message (visible or not: the reaper hides what it has read for an hour);
 * - a job queue's oldest message is older than its queue's threshold (consumers stuck or throttled);
 * - the outbox backlog the dispatcher reports (`AiJobs/OutboxBacklog`, service `outbox-dispatcher`) stays high;
 * - any function reports errors, or is throttled;
 * - database and consumers (./database-alarms.ts): Aurora ACU use, proxy connections and pinned sessions,
 *   the share of jobs that fail, consumer durations close to their timeout;
 * - realtime push (./realtime-alarms.ts): the Event API's publish errors, and pushes the publisher lost;
 * - provider capacity and spend (./budget-alarms.ts): platform spend above 80% of its daily cap, a model in
 *   cooldown for more than 10 minutes, reservations that failed to settle.
 *
 * The topic refuses non-TLS publishing (`enforceSSL`, a Deny) and allows CloudWatch alarms of this account
 * to publish: a topic policy with only the Deny would drop every alarm notification.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { JOB_QUEUE_NAMES, type QueueName } from '../lib/queue/queue-definitions.ts';
import type { JobQueues } from './job-queues.ts';
import { consumerAlarms, databaseAlarms, type ConsumerAlarmTarget, type DatabaseAlarmTargets } from './database-alarms.ts';
import { realtimeAlarms } from './realtime-alarms.ts';
import { budgetAlarms } from './budget-alarms.ts';

/** Oldest-message age that means a queue is not being drained. */
export const OLDEST_MESSAGE_AGE_THRESHOLD_SECONDS: Readonly<Record<QueueName, number>> = { interactive: 300, background: 1800 };
/** Due outbox rows that mean dispatch is falling behind (eager dispatch normally keeps it near zero). */
export const OUTBOX_BACKLOG_THRESHOLD = 500;
/** Where the dispatcher publishes the backlog (Powertools EMF: namespace, metric, `service` dimension). */
export const OUTBOX_BACKLOG_METRIC = { namespace: 'AiJobs', metricName: 'OutboxBacklog', service: 'outbox-dispatcher' } as const;

export interface AlarmsProps {
  stage: string;
  alarmEmail: string | undefined;
  queues: JobQueues;
  functions: Record<string, lambda.IFunction>;
  /** Absent on LocalStack (no Aurora or proxy there). */
  database?: DatabaseAlarmTargets;
  consumers: Record<QueueName, ConsumerAlarmTarget>;
  /** The Event API's id; absent where the stage has no realtime push (LocalStack). */
  realtimeApiId?: string;
}

/** Options of one alarm; the comparison defaults to "greater than", one period, missing data not breaching. */
export interface AlarmOptions {
  threshold: number;
  description: string;
  evaluationPeriods?: number;
  comparisonOperator?: cloudwatch.ComparisonOperator;
}

/** Creates an alarm that notifies `topic`. */
export type AddAlarm = (id: string, metric: cloudwatch.IMetric, options: AlarmOptions) => cloudwatch.Alarm;

export class JobAlarms extends Construct {
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', { displayName: `ai-jobs ${props.stage} alarms`, enforceSSL: true });
    allowCloudWatchAlarms(this.topic);
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    for (const queue of JOB_QUEUE_NAMES) this.queueAlarms(props.queues, queue);
    this.outboxBacklogAlarm();
    for (const [name, fn] of Object.entries(props.functions)) this.functionAlarms(name, fn);
    const add: AddAlarm = (id, metric, options) => this.alarm(id, metric, options);
    if (props.database) databaseAlarms(add, props.database);
    consumerAlarms(add, props.consumers);
    if (props.realtimeApiId) realtimeAlarms(add, props.realtimeApiId);
    budgetAlarms(add);
  }

  private queueAlarms(queues: JobQueues, queue: QueueName): void {
    const dlq = queues.deadLetterQueues[queue];
    const period = Duration.minutes(1);
    const messages = new cloudwatch.MathExpression({
      label: `${queue} dead-letter messages`,
      expression: 'visible + hidden',
      usingMetrics: {
        visible: dlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period }),
        hidden: dlq.metricApproximateNumberOfMessagesNotVisible({ statistic: 'Maximum', period }),
      },
      period,
    });
    const pascal = queue[0]!.toUpperCase() + queue.slice(1);
    this.alarm(`${pascal}DeadLetterQueueNotEmpty`, messages, {
      threshold: 0, comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      description: `Messages in ${queue} dead-letter queue: jobs failed DEAD_LETTERED; inspect, then purge`,
    });
    const age = queues.queues[queue].metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period });
    this.alarm(`${pascal}OldestMessageAge`, age, {
      threshold: OLDEST_MESSAGE_AGE_THRESHOLD_SECONDS[queue], evaluationPeriods: 3,
      description: `Oldest ${queue} message older than ${OLDEST_MESSAGE_AGE_THRESHOLD_SECONDS[queue]}s: consumers behind or failing`,
    });
  }

  private outboxBacklogAlarm(): void {
    const backlog = new cloudwatch.Metric({
      namespace: OUTBOX_BACKLOG_METRIC.namespace,
      metricName: OUTBOX_BACKLOG_METRIC.metricName,
      dimensionsMap: { service: OUTBOX_BACKLOG_METRIC.service },
      statistic: 'Maximum',
      period: Duration.minutes(1),
    });
    this.alarm('OutboxBacklog', backlog, {
      threshold: OUTBOX_BACKLOG_THRESHOLD, evaluationPeriods: 5,
      description: `More than ${OUTBOX_BACKLOG_THRESHOLD} due outbox rows for 5 minutes: dispatcher failing or too slow`,
    });
  }

  private functionAlarms(name: string, fn: lambda.IFunction): void {
    const period = Duration.minutes(5);
    this.alarm(`${name}Errors`, fn.metricErrors({ statistic: 'Sum', period }), {
      threshold: 1, comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      description: `${name} invocations failed`,
    });
    this.alarm(`${name}Throttles`, fn.metricThrottles({ statistic: 'Sum', period }), {
      threshold: 1, comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      description: `${name} invocations throttled (account concurrency exhausted?)`,
    });
  }

  private alarm(id: string, metric: cloudwatch.IMetric, options: AlarmOptions): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, {
      metric,
      threshold: options.threshold,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      comparisonOperator: options.comparisonOperator ?? cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: options.description,
    });
    alarm.addAlarmAction(new actions.SnsAction(this.topic));
    return alarm;
  }
}

/**
 * Lets CloudWatch alarms of this account publish to `topic` (SNS's documented policy for CloudWatch, scoped with
 * `aws:SourceAccount` and `aws:SourceArn` so no other account's alarm can use the topic).
 */
export function allowCloudWatchAlarms(topic: sns.Topic): void {
  const { account, region, partition } = Stack.of(topic);
  topic.addToResourcePolicy(new iam.PolicyStatement({
    sid: 'AllowCloudWatchAlarmsOfThisAccount',
    principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
    actions: ['sns:Publish'],
    resources: [topic.topicArn],
    conditions: {
      StringEquals: { 'aws:SourceAccount': account },
      ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
    },
  }));
}
