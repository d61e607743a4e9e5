/**
 * The job queues, built from lib/queue/queue-definitions.ts — the same definitions the local runtime and the
 * test harness create through the SQS API (test/infra/queue-parity.test.ts proves the attributes equal).
 * Nothing about a queue is decided here except how CDK spells it, plus a policy that refuses plain HTTP.
 * Synth fails when a job definition needs more receives than its queue's `maxReceiveCount`
 * (lib/queue/receive-budget.ts): such a queue would dead-letter jobs that still have attempts left.
 */
import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  JOB_QUEUE_NAMES,
  jobQueueDefinitions,
  type FifoQueueSpec,
  type JobQueueDefinition,
  type QueueDefinitionOptions,
  type QueueName,
} from '../lib/queue/queue-definitions.ts';
import { assertReceiveBudget } from '../lib/queue/receive-budget.ts';
import type { JobDefinitionMetadata } from '../lib/jobs/definition.ts';

export interface JobQueuesProps {
  stage: string;
  options: QueueDefinitionOptions;
  /** Every job definition the consumers run (the registry's), checked against the queues' receive budget. */
  jobDefinitions: readonly JobDefinitionMetadata[];
}

export class JobQueues extends Construct {
  readonly definitions: Record<QueueName, JobQueueDefinition>;
  readonly queues: Record<QueueName, sqs.Queue>;
  readonly deadLetterQueues: Record<QueueName, sqs.Queue>;

  constructor(scope: Construct, id: string, props: JobQueuesProps) {
    super(scope, id);
    this.definitions = jobQueueDefinitions(props.stage, props.options);
    assertReceiveBudget(props.jobDefinitions, {
      interactive: this.definitions.interactive.maxReceiveCount, background: this.definitions.background.maxReceiveCount,
    });
    const queues: Partial<Record<QueueName, sqs.Queue>> = {};
    const deadLetterQueues: Partial<Record<QueueName, sqs.Queue>> = {};
    for (const name of JOB_QUEUE_NAMES) {
      const definition = this.definitions[name];
      const pascal = name[0]!.toUpperCase() + name.slice(1);
      const dlq = fifoQueue(this, `${pascal}DeadLetterQueue`, definition.deadLetterQueue);
      deadLetterQueues[name] = dlq;
      queues[name] = fifoQueue(this, `${pascal}Queue`, definition.queue, {
        queue: dlq, maxReceiveCount: definition.maxReceiveCount,
      });
    }
    this.queues = queues as Record<QueueName, sqs.Queue>;
    this.deadLetterQueues = deadLetterQueues as Record<QueueName, sqs.Queue>;
  }

  /** Both job queues, in {@link JOB_QUEUE_NAMES} order. */
  allQueues(): sqs.Queue[] {
    return JOB_QUEUE_NAMES.map((name) => this.queues[name]);
  }

  /** Both dead-letter queues, in {@link JOB_QUEUE_NAMES} order. */
  allDeadLetterQueues(): sqs.Queue[] {
    return JOB_QUEUE_NAMES.map((name) => this.deadLetterQueues[name]);
  }
}

function fifoQueue(scope: Construct, id: string, spec: FifoQueueSpec, deadLetterQueue?: sqs.DeadLetterQueue): sqs.Queue {
  return new sqs.Queue(scope, id, {
    queueName: spec.name,
    fifo: true,
    contentBasedDeduplication: false,
    deduplicationScope: spec.deduplicationScope === 'messageGroup' ? sqs.DeduplicationScope.MESSAGE_GROUP : sqs.DeduplicationScope.QUEUE,
    fifoThroughputLimit: spec.fifoThroughputLimit === 'perMessageGroupId'
      ? sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID
      : sqs.FifoThroughputLimit.PER_QUEUE,
    visibilityTimeout: Duration.seconds(spec.visibilityTimeoutSeconds),
    retentionPeriod: Duration.seconds(spec.retentionSeconds),
    maxMessageSizeBytes: spec.maxMessageSizeBytes,
    receiveMessageWaitTime: Duration.seconds(spec.receiveWaitSeconds),
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    ...(deadLetterQueue ? { deadLetterQueue } : {}),
  });
}
