/**
 * Terminal job events: the helper that writes their outbox rows, and their delivery to an EventBridge bus
 * (moto, or LocalStack via AWS_ENDPOINT_URL) where a rule forwards them to an SQS target.
 */
import { describe, expect, inject, it } from 'vitest';
import { CreateEventBusCommand, EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { getPrisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { runDispatchCycle } from '../../lib/outbox/dispatcher.ts';
import {
  addJobTerminalEvent, buildJobTerminalEvent, JOB_EVENT_SOURCE, JobNotTerminalError, toJobEventDetail,
} from '../../lib/outbox/job-events.ts';
import { insertJob } from '../helpers/factories.ts';
import { freePort } from '../helpers/ports.ts';
import { outboxRows, testDispatcherDeps, testEventBridgeClient } from '../helpers/outbox-factories.ts';

const DETAIL_KEYS = [
  'attemptCount', 'createdAt', 'errorCode', 'eventId', 'finishedAt', 'jobId', 'jobType', 'occurredAt', 'parentJobId',
  'startedAt', 'status', 'userId', 'version',
];
const NO_QUEUES = { interactive: 'unused', background: 'unused' };

/** A bus with a rule sending every `ai.jobs` event to a fresh SQS queue, all on the AWS emulator. */
async function busWithQueueTarget() {
  const eventBridge = testEventBridgeClient();
  const sqs = new SQSClient({ region: 'us-east-1', endpoint: inject('awsEndpoint') });
  const name = `ai-jobs-${newId().toLowerCase()}`;
  await eventBridge.send(new CreateEventBusCommand({ Name: name }));
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  await eventBridge.send(new PutRuleCommand({
    Name: 'job-events', EventBusName: name, EventPattern: JSON.stringify({ source: [JOB_EVENT_SOURCE] }),
  }));
  await eventBridge.send(new PutTargetsCommand({
    Rule: 'job-events', EventBusName: name, Targets: [{ Id: 'queue', Arn: Attributes?.QueueArn }],
  }));
  const receive = async () => (await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }))).Messages ?? [];
  return { eventBridge, eventBusName: name, receive };
}

describe('job events', () => {
  it('delivers ai.job.succeeded to a rule target on the bus with the documented detail and nothing secret', async () => {
    const bus = await busWithQueueTarget();
    const job = await insertJob({
      lifecycleStatus: 'succeeded', credentialId: 'cred-secret-0001', internalErrorMessage: 'stack trace with sk-secret',
    });
    await getPrisma().aiJobSnapshot.create({
      data: { id: newId(), jobId: job.id, schemaVersion: 'v1', content: { prompt: 'my private essay' }, contentHash: '0'.repeat(64), redactionVersion: 1 },
    });
    const row = await addJobTerminalEvent(getPrisma(), job);
    const deps = testDispatcherDeps({ queueUrls: NO_QUEUES, eventBridge: bus.eventBridge, eventBusName: bus.eventBusName });

    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, published: 1 });

    const [message, ...others] = await bus.receive();
    expect(others).toHaveLength(0);
    const event = JSON.parse(message?.Body ?? '{}');
    expect(event).toMatchObject({ source: 'ai.jobs', 'detail-type': 'ai.job.succeeded' });
    expect(Object.keys(event.detail).sort()).toEqual(DETAIL_KEYS);
    expect(event.detail).toEqual(toJobEventDetail(job, row.id, row.availableAt));
    expect(event.detail).toMatchObject({ jobId: job.id, status: 'succeeded', errorCode: null, userId: job.userId, jobType: 'synthetic_job' });
    for (const secret of ['cred-secret-0001', 'sk-secret', 'my private essay', job.inputHash, job.outputHash]) {
      expect(message?.Body).not.toContain(secret);
    }
    expect((await outboxRows([row.id]))[0]).toMatchObject({ status: 'published' });
  });

  it('carries the error code of a failed job, never its messages', async () => {
    const job = await insertJob({
      lifecycleStatus: 'failed', errorCode: 'PROVIDER_TIMEOUT', publicErrorMessage: 'The model timed out', internalErrorMessage: 'socket hang up at 10.0.0.7',
    });
    const row = await addJobTerminalEvent(getPrisma(), job);
    expect(row).toMatchObject({ eventType: 'ai.job.failed', dedupeKey: `ai.job.failed:${job.id}`, aggregateId: job.id, queueName: null });
    expect(row.payload).toMatchObject({ status: 'failed', errorCode: 'PROVIDER_TIMEOUT', eventId: row.id });
    expect(JSON.stringify(row.payload)).not.toMatch(/timed out|10\.0\.0\.7/);
  });

  it('writes one event per job: a second one is refused by the dedupe key', async () => {
    const job = await insertJob({ lifecycleStatus: 'cancelled' });
    expect((await addJobTerminalEvent(getPrisma(), job)).eventType).toBe('ai.job.cancelled');
    await expect(addJobTerminalEvent(getPrisma(), job)).rejects.toThrow(/Duplicate entry/);
  });

  it('refuses to announce a job that has not finished', async () => {
    const job = await insertJob({ lifecycleStatus: 'running' });
    expect(() => buildJobTerminalEvent(job)).toThrow(JobNotTerminalError);
    await expect(addJobTerminalEvent(getPrisma(), job)).rejects.toBeInstanceOf(JobNotTerminalError);
  });

  it('fails closed on a stored detail with extra fields: row failed, nothing put on the bus', async () => {
    const bus = await busWithQueueTarget();
    const job = await insertJob({ lifecycleStatus: 'succeeded' });
    const event = buildJobTerminalEvent(job);
    await getPrisma().outboxEvent.create({
      data: { ...event, payload: { ...(event.payload as object), output: { answer: 'private' } } },
    });
    const deps = testDispatcherDeps({ queueUrls: NO_QUEUES, eventBridge: bus.eventBridge, eventBusName: bus.eventBusName });

    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, failed: 1, published: 0 });
    expect((await outboxRows())[0]?.lastError).toMatch(/^INVALID_EVENT_DETAIL: /);
    expect(await bus.receive()).toHaveLength(0);
  });

  it('retries with backoff while the bus is unreachable', async () => {
    const job = await insertJob({ lifecycleStatus: 'succeeded' });
    await addJobTerminalEvent(getPrisma(), job);
    const unreachable = new EventBridgeClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 1 });
    const deps = testDispatcherDeps({ queueUrls: NO_QUEUES, eventBridge: unreachable, eventBusName: 'nowhere' });

    expect(await runDispatchCycle(deps)).toMatchObject({ claimed: 1, retried: 1 });
    expect((await outboxRows())[0]).toMatchObject({ status: 'pending', attemptCount: 1 });
  });
});
