/**
 * The job queues, as data: the one source of truth for their names, attributes and redrive. The local
 * helper (./create-queues.ts) creates them on an emulator or LocalStack from this module, and the CDK stack
 * must import the same module so production queues are identical. Pure data: no AWS SDK imports.
 *
 * Each job queue is SQS FIFO with its own FIFO dead-letter queue; a message moves there after
 * `maxReceiveCount` receives without being deleted (a consumer that keeps crashing on it).
 */
import { EngineError } from '../errors.ts';
import type { QueueName } from '../jobs/definition.ts';

export type { QueueName };

/** Every job queue, in a stable order (mirrors `QUEUE_NAMES` in lib/jobs/definition.ts). */
export const JOB_QUEUE_NAMES = ['interactive', 'background'] as const satisfies readonly QueueName[];

/**
 * Receives before a message goes to the dead-letter queue where nothing configures it (local runtime, tests).
 * Every engine retry is a redelivery of the same message, so this must cover what the registry's definitions
 * need (./receive-budget.ts; test/infra/receive-budget.test.ts checks it). The stack derives its own value.
 */
export const DEFAULT_MAX_RECEIVE_COUNT = 20;

/**
 * Default visibility timeouts. They must exceed the consumer Lambda's timeout (AWS advises 6×), or a message
 * becomes visible again while its first delivery still runs: 6 × the stack's consumer timeouts (90 s, 300 s).
 */
export const DEFAULT_VISIBILITY_TIMEOUT_SECONDS: Readonly<Record<QueueName, number>> = {
  interactive: 540,
  background: 1800,
};

const FOUR_DAYS_SECONDS = 4 * 24 * 3600;
const FOURTEEN_DAYS_SECONDS = 14 * 24 * 3600;
/** Our bodies are a few hundred bytes (ADR §3.2); anything near this limit is a bug. */
const MAX_MESSAGE_SIZE_BYTES = 262_144;

/** One FIFO queue, in terms both the SQS API and CDK's `Queue` props can express. */
export interface FifoQueueSpec {
  /** Full queue name, ending in `.fifo`. */
  name: string;
  visibilityTimeoutSeconds: number;
  retentionSeconds: number;
  maxMessageSizeBytes: number;
  /** Long-poll wait for ReceiveMessage callers that do not pass their own. */
  receiveWaitSeconds: number;
  /** High-throughput FIFO: dedupe and throughput limits apply per message group. */
  deduplicationScope: 'messageGroup' | 'queue';
  fifoThroughputLimit: 'perMessageGroupId' | 'perQueue';
}

/** A job queue and its dead-letter queue. */
export interface JobQueueDefinition {
  queueName: QueueName;
  queue: FifoQueueSpec;
  deadLetterQueue: FifoQueueSpec;
  /** Receives before SQS moves a message to {@link deadLetterQueue}. */
  maxReceiveCount: number;
}

/** Per-environment knobs; everything else about the queues is fixed here. */
export interface QueueDefinitionOptions {
  maxReceiveCount?: number;
  visibilityTimeoutSeconds?: Partial<Record<QueueName, number>>;
}

/** Deployment stage in queue names: lower-case letters, digits and `-`, so names stay valid everywhere. */
const STAGE_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;

/** Thrown for a stage or option that would produce invalid or surprising queues. */
export class InvalidQueueDefinitionError extends EngineError {
  readonly code = 'INVALID_QUEUE_DEFINITION';
}

/** `ai-jobs-<stage>-<queue>.fifo`, e.g. `ai-jobs-prod-interactive.fifo`. */
export function jobQueueName(stage: string, queueName: QueueName): string {
  return `ai-jobs-${stage}-${queueName}.fifo`;
}

/** `ai-jobs-<stage>-<queue>-dlq.fifo`: a FIFO queue's dead-letter queue must itself be FIFO. */
export function deadLetterQueueName(stage: string, queueName: QueueName): string {
  return `ai-jobs-${stage}-${queueName}-dlq.fifo`;
}

/**
 * The job queues of one stage. Same input, same output: the emulator helper and the CDK stack call this
 * with the stage and options of their environment.
 */
export function jobQueueDefinitions(stage: string, options: QueueDefinitionOptions = {}): Record<QueueName, JobQueueDefinition> {
  if (!STAGE_PATTERN.test(stage)) throw new InvalidQueueDefinitionError(`stage must match ${STAGE_PATTERN.source}`);
  const maxReceiveCount = options.maxReceiveCount ?? DEFAULT_MAX_RECEIVE_COUNT;
  if (!Number.isInteger(maxReceiveCount) || maxReceiveCount < 1 || maxReceiveCount > 1000) {
    throw new InvalidQueueDefinitionError('maxReceiveCount must be an integer from 1 to 1000');
  }
  const define = (queueName: QueueName): JobQueueDefinition => {
    const visibility = options.visibilityTimeoutSeconds?.[queueName] ?? DEFAULT_VISIBILITY_TIMEOUT_SECONDS[queueName];
    if (!Number.isInteger(visibility) || visibility < 0 || visibility > 43_200) {
      throw new InvalidQueueDefinitionError('visibility timeout must be an integer from 0 to 43200 seconds');
    }
    return {
      queueName,
      queue: fifoSpec(jobQueueName(stage, queueName), visibility, FOUR_DAYS_SECONDS),
      // Kept longer than the source queue so a message never expires in the DLQ before anyone looks.
      deadLetterQueue: fifoSpec(deadLetterQueueName(stage, queueName), visibility, FOURTEEN_DAYS_SECONDS),
      maxReceiveCount,
    };
  };
  return { interactive: define('interactive'), background: define('background') };
}

function fifoSpec(name: string, visibilityTimeoutSeconds: number, retentionSeconds: number): FifoQueueSpec {
  return {
    name,
    visibilityTimeoutSeconds,
    retentionSeconds,
    maxMessageSizeBytes: MAX_MESSAGE_SIZE_BYTES,
    receiveWaitSeconds: 20,
    deduplicationScope: 'messageGroup',
    fifoThroughputLimit: 'perMessageGroupId',
  };
}

/**
 * The SQS `CreateQueue` attributes of a spec. `deadLetterTargetArn` adds the redrive policy; content-based
 * deduplication stays off because every message carries the outbox row's deduplication id.
 */
export function toSqsQueueAttributes(
  spec: FifoQueueSpec,
  redrive?: { deadLetterTargetArn: string; maxReceiveCount: number },
): Record<string, string> {
  const attributes: Record<string, string> = {
    FifoQueue: 'true',
    ContentBasedDeduplication: 'false',
    DeduplicationScope: spec.deduplicationScope,
    FifoThroughputLimit: spec.fifoThroughputLimit,
    VisibilityTimeout: String(spec.visibilityTimeoutSeconds),
    MessageRetentionPeriod: String(spec.retentionSeconds),
    MaximumMessageSize: String(spec.maxMessageSizeBytes),
    ReceiveMessageWaitTimeSeconds: String(spec.receiveWaitSeconds),
    SqsManagedSseEnabled: 'true',
  };
  if (redrive) attributes.RedrivePolicy = JSON.stringify(redrive);
  return attributes;
}
