/**
 * Outbox test helpers: enqueue rows as job creation writes them, bulk jobs for load tests, per-test
 * queues on the SQS emulator, dispatcher deps with a movable clock, and a recording logger/metrics.
 */
import { inject } from 'vitest';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { getPrisma, type AiJob, type Db, type OutboxEvent, type Prisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import type { SqlPool } from '../../lib/db/sql-pool.ts';
import { createJobQueues, type CreatedJobQueue } from '../../lib/queue/create-queues.ts';
import type { QueueDefinitionOptions, QueueName } from '../../lib/queue/queue-definitions.ts';
import { buildEnqueueEvent } from '../../lib/outbox/outbox-writer.ts';
import { createDispatcherDeps, type DispatchPolicy, type DispatcherDeps } from '../../lib/outbox/dispatcher-deps.ts';
import { createOutboxRoutes } from '../../lib/outbox/routes.ts';

/** An SQS client on the test SQS server (fauxqs), one attempt per call so failures show at once. */
export function testSqsClient(endpoint = inject('sqsEndpoint')): SQSClient {
  return new SQSClient({ region: 'us-east-1', endpoint, maxAttempts: 1 });
}

/** An EventBridge client on moto (or LocalStack). */
export function testEventBridgeClient(): EventBridgeClient {
  return new EventBridgeClient({ region: 'us-east-1', endpoint: inject('awsEndpoint'), maxAttempts: 1 });
}

/** A fresh stage name so parallel tests on the shared emulator never share queues. */
export function uniqueStage(): string {
  return `t${newId().slice(-12).toLowerCase()}`;
}

/** Creates this test's job queues (with DLQs) on the SQS server. */
export async function createTestQueues(
  sqs: SQSClient = testSqsClient(), options: QueueDefinitionOptions = {},
): Promise<{ stage: string; queues: Record<QueueName, CreatedJobQueue>; queueUrls: Record<QueueName, string> }> {
  const stage = uniqueStage();
  const queues = await createJobQueues(sqs, stage, options);
  return { stage, queues, queueUrls: { interactive: queues.interactive.queueUrl, background: queues.background.queueUrl } };
}

/** The outbox row job creation writes for `job` (built by the same `buildEnqueueEvent`), as a createMany row. */
export function enqueueRowFor(
  job: Pick<AiJob, 'id' | 'queueName'>, overrides: Partial<Prisma.OutboxEventCreateManyInput> = {},
): Prisma.OutboxEventCreateManyInput & { id: string; aggregateId: string } {
  const event = buildEnqueueEvent({ jobId: job.id, queueName: job.queueName, messageGroupId: job.id });
  return {
    ...event, queueName: event.queueName ?? null, messageGroupId: event.messageGroupId ?? null,
    status: 'pending', availableAt: new Date(), ...overrides,
  };
}

/** Inserts the enqueue row of an existing job. */
export async function insertEnqueueEvent(
  job: Pick<AiJob, 'id' | 'queueName'>, overrides: Partial<Prisma.OutboxEventCreateManyInput> = {}, db: Db = getPrisma(),
): Promise<OutboxEvent> {
  const row = enqueueRowFor(job, overrides);
  await db.outboxEvent.createMany({ data: [row] });
  return db.outboxEvent.findUniqueOrThrow({ where: { id: row.id } });
}

/** A queued synthetic job row (all required columns) for bulk inserts. */
export function queuedJobRow(overrides: Partial<Prisma.AiJobCreateManyInput> = {}): Prisma.AiJobCreateManyInput & { id: string; queueName: string } {
  return {
    id: newId(), userId: 'user-1', jobType: 'synthetic_job', triggerType: 'user', targetType: 'test', targetId: 'target-1',
    inputHash: '0'.repeat(64), lifecycleStatus: 'queued', queueName: 'interactive', priority: 50, maxAttempts: 3, timeoutMs: 30_000,
    inputSchemaVersion: 'v1', outputSchemaVersion: 'v1', promptKey: 'synthetic', promptVersion: 'v1', modelTier: 'fast',
    credentialMode: 'platform_key', ...overrides,
  };
}

/**
 * Inserts `count` queued jobs with their enqueue rows, alternating interactive/background (as their
 * definitions would route them) unless `queueOf` says otherwise. Bulk inserts: fast enough for thousands.
 */
export async function insertQueuedJobsWithEvents(
  count: number, queueOf: (i: number) => QueueName = (i) => (i % 2 === 0 ? 'interactive' : 'background'),
): Promise<{ jobs: { id: string; queueName: string }[]; events: ReturnType<typeof enqueueRowFor>[] }> {
  const jobs = Array.from({ length: count }, (_, i) => queuedJobRow({ queueName: queueOf(i) }));
  const events = jobs.map((j) => enqueueRowFor(j));
  const db = getPrisma();
  for (let i = 0; i < count; i += 500) {
    await db.aiJob.createMany({ data: jobs.slice(i, i + 500) });
    await db.outboxEvent.createMany({ data: events.slice(i, i + 500) });
  }
  return { jobs, events };
}

/** Receives (and deletes) every message on a queue until it stays empty. */
export async function drainQueue(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  const all: Message[] = [];
  for (let empty = 0; empty < 2;) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({
      QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageSystemAttributeNames: ['All'],
    }));
    if (Messages.length === 0) { empty += 1; continue; }
    empty = 0;
    all.push(...Messages);
    await sqs.send(new DeleteMessageBatchCommand({
      QueueUrl: queueUrl, Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
    }));
  }
  return all;
}

export interface LogRecord { level: 'info' | 'warn' | 'error'; message: string; attributes: Record<string, unknown>[] }

/** A logger that keeps what it is told, so tests can assert on levels and on what was never logged. */
export function recordingLogger() {
  const records: LogRecord[] = [];
  const at = (level: LogRecord['level']) => (message: string, ...attributes: Record<string, unknown>[]) => {
    records.push({ level, message, attributes });
  };
  return { records, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Metrics that keep every value added; `published` counts flushes. */
export function recordingMetrics() {
  const values: { name: string; value: number }[] = [];
  let published = 0;
  return {
    values,
    get published() { return published; },
    addMetric: (name: string, _unit: string, value: number) => values.push({ name, value }),
    publishStoredMetrics: () => { published += 1; },
    total: (name: string) => values.filter((v) => v.name === name).reduce((n, v) => n + v.value, 0),
  };
}

/** A clock at real time plus an offset the test moves (to pass a lock TTL or a backoff without sleeping). */
export function movableClock() {
  let offsetMs = 0;
  return { now: () => new Date(Date.now() + offsetMs), advance: (ms: number) => { offsetMs += ms; } };
}

/** Dispatcher deps on the test emulators, with recording observability and an optional policy. */
export function testDispatcherDeps(opts: {
  queueUrls: Record<QueueName, string>;
  sqs?: SQSClient;
  eventBridge?: EventBridgeClient;
  eventBusName?: string;
  db?: Db;
  sql?: SqlPool;
  policy?: Partial<DispatchPolicy>;
  instanceId?: string;
}): DispatcherDeps & { logger: ReturnType<typeof recordingLogger>; metrics: ReturnType<typeof recordingMetrics> } {
  const logger = recordingLogger();
  const metrics = recordingMetrics();
  const routes = createOutboxRoutes({
    sqs: opts.sqs ?? testSqsClient(),
    queueUrls: opts.queueUrls,
    eventBridge: opts.eventBridge ?? testEventBridgeClient(),
    eventBusName: opts.eventBusName ?? 'default',
  });
  const deps = createDispatcherDeps({
    db: opts.db ?? getPrisma(), routes, logger, metrics, ...(opts.instanceId ? { instanceId: opts.instanceId } : {}),
    ...(opts.sql ? { sql: opts.sql } : {}),
    ...(opts.policy ? { policy: opts.policy } : {}),
  });
  return { ...deps, logger, metrics };
}

/** Outbox rows by id, for assertions. */
export async function outboxRows(ids?: string[]): Promise<OutboxEvent[]> {
  return getPrisma().outboxEvent.findMany({ where: ids ? { id: { in: ids } } : {}, orderBy: { id: 'asc' } });
}
