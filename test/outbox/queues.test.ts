/**
 * Queue configuration: the definitions (one source of truth for the helper and the CDK stack), the helper
 * that creates them on the SQS emulator, the job message schema both sides use, and environment config.
 */
import { describe, expect, it } from 'vitest';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import {
  ConfigurationError, dispatchTargetsFromEnv, endpointFor, queueOptionsFromEnv,
} from '../../lib/config/aws.ts';
import { newId } from '../../lib/db/ids.ts';
import { createJobQueues } from '../../lib/queue/create-queues.ts';
import { encodeJobMessage, InvalidJobMessageError, parseJobMessage } from '../../lib/queue/job-message.ts';
import {
  InvalidQueueDefinitionError, jobQueueDefinitions, toSqsQueueAttributes,
} from '../../lib/queue/queue-definitions.ts';
import { toDeduplicationId } from '../../lib/outbox/sqs-sender.ts';
import { createTestQueues, testSqsClient, uniqueStage } from '../helpers/outbox-factories.ts';

describe('queue definitions', () => {
  it('names a FIFO queue and a FIFO dead-letter queue per job queue and stage', () => {
    const defs = jobQueueDefinitions('prod');
    expect(defs.interactive.queue.name).toBe('ai-jobs-prod-interactive.fifo');
    expect(defs.interactive.deadLetterQueue.name).toBe('ai-jobs-prod-interactive-dlq.fifo');
    expect(defs.background.queue.name).toBe('ai-jobs-prod-background.fifo');
    expect(defs.background.maxReceiveCount).toBe(20);
    expect(jobQueueDefinitions('prod', { maxReceiveCount: 2 }).interactive.maxReceiveCount).toBe(2);
    expect(() => jobQueueDefinitions('Prod_1')).toThrow(InvalidQueueDefinitionError);
    expect(() => jobQueueDefinitions('prod', { maxReceiveCount: 0 })).toThrow(InvalidQueueDefinitionError);
  });

  it('creates the same queues, attributes and redrive on the emulator, idempotently', async () => {
    const sqs = testSqsClient();
    const stage = uniqueStage();
    const created = await createJobQueues(sqs, stage, { maxReceiveCount: 3 });
    expect(await createJobQueues(sqs, stage, { maxReceiveCount: 3 })).toEqual(created);

    const defs = jobQueueDefinitions(stage, { maxReceiveCount: 3 });
    for (const name of ['interactive', 'background'] as const) {
      const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: created[name].queueUrl, AttributeNames: ['All'] }));
      const expected = toSqsQueueAttributes(defs[name].queue, { deadLetterTargetArn: created[name].deadLetterQueueArn, maxReceiveCount: 3 });
      const actual: Record<string, string | undefined> = Attributes;
      const { RedrivePolicy, ...plain } = expected;
      for (const [key, value] of Object.entries(plain)) expect(actual[key], key).toBe(value);
      expect(JSON.parse(actual.RedrivePolicy ?? '')).toEqual(JSON.parse(RedrivePolicy ?? ''));
      expect(created[name].deadLetterQueueArn).toMatch(/-dlq\.fifo$/);
    }
  });

  it('moves a message to the dead-letter queue after the max receive count', async () => {
    const sqs = testSqsClient();
    const { queues } = await createTestQueues(sqs, { maxReceiveCount: 1 });
    const q = queues.interactive;
    await sqs.send(new SendMessageCommand({ QueueUrl: q.queueUrl, MessageBody: 'x', MessageGroupId: 'g', MessageDeduplicationId: 'd' }));
    const receive = (url: string) => sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 0, WaitTimeSeconds: 0 }));

    expect((await receive(q.queueUrl)).Messages).toHaveLength(1); // receive 1, never deleted
    expect((await receive(q.queueUrl)).Messages ?? []).toHaveLength(0); // over the limit: redriven
    expect((await receive(q.deadLetterQueueUrl)).Messages?.[0]?.Body).toBe('x');
  });
});

describe('job message', () => {
  const message = { jobId: newId(), jobType: 'synthetic_job', idempotencyKey: 'ai.job.enqueue:x', createdAt: new Date().toISOString() };

  it('round-trips through the schema the consumer uses', () => {
    expect(parseJobMessage(encodeJobMessage(message))).toEqual(message);
  });

  it('refuses unknown fields, bad ids and non-JSON, naming fields but never values', () => {
    expect(() => parseJobMessage(JSON.stringify({ ...message, input: 'secret-input' }))).toThrow(InvalidJobMessageError);
    expect(() => parseJobMessage('{not json')).toThrow(InvalidJobMessageError);
    try {
      parseJobMessage(JSON.stringify({ ...message, jobId: 'secret-value' }));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidJobMessageError);
      expect((err as InvalidJobMessageError).message).toContain('jobId');
      expect((err as InvalidJobMessageError).message).not.toContain('secret-value');
    }
  });

  it('uses the dedupe key as deduplication id, hashing keys SQS would refuse', () => {
    expect(toDeduplicationId('ai.job.enqueue:01J00000000000000000000000')).toBe('ai.job.enqueue:01J00000000000000000000000');
    expect(toDeduplicationId('x'.repeat(129))).toMatch(/^[0-9a-f]{64}$/);
    expect(toDeduplicationId('clé')).toBe(toDeduplicationId('clé'));
  });
});

describe('AWS configuration', () => {
  it('reads queue URLs and bus name, naming what is missing', () => {
    const env = { INTERACTIVE_QUEUE_URL: 'http://q/i.fifo', BACKGROUND_QUEUE_URL: 'http://q/b.fifo', EVENT_BUS_NAME: 'bus' };
    expect(dispatchTargetsFromEnv(env)).toEqual({ queueUrls: { interactive: 'http://q/i.fifo', background: 'http://q/b.fifo' }, eventBusName: 'bus' });
    expect(() => dispatchTargetsFromEnv({ ...env, BACKGROUND_QUEUE_URL: ' ' })).toThrow(ConfigurationError);
    expect(() => dispatchTargetsFromEnv({ ...env, BACKGROUND_QUEUE_URL: undefined })).toThrow(/BACKGROUND_QUEUE_URL/);
  });

  it('reads queue options with defaults', () => {
    expect(queueOptionsFromEnv({})).toEqual({ maxReceiveCount: 20, visibilityTimeoutSeconds: {} });
    expect(queueOptionsFromEnv({ QUEUE_MAX_RECEIVE_COUNT: '8', BACKGROUND_VISIBILITY_TIMEOUT_SECONDS: '600' }))
      .toEqual({ maxReceiveCount: 8, visibilityTimeoutSeconds: { background: 600 } });
    expect(() => queueOptionsFromEnv({ QUEUE_MAX_RECEIVE_COUNT: 'many' })).toThrow(ConfigurationError);
  });

  it('prefers the service endpoint over the general one, and none on AWS', () => {
    expect(endpointFor('SQS', { AWS_ENDPOINT_URL_SQS: 'http://sqs:1', AWS_ENDPOINT_URL: 'http://all:2' })).toBe('http://sqs:1');
    expect(endpointFor('EVENTBRIDGE', { AWS_ENDPOINT_URL_SQS: 'http://sqs:1', AWS_ENDPOINT_URL: 'http://all:2' })).toBe('http://all:2');
    expect(endpointFor('SQS', {})).toBeUndefined();
  });
});
