/**
 * The whole job path on real services for engine tests: queues on the SQS emulator (a stage of their own per
 * test file), createJob with eager dispatch to them, the mock AI provider over HTTP, and a consumer that
 * receives real SQS messages and hands them to the Lambda batch handler logic.
 */
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { deleteAcknowledged, toSqsEvent } from '../../lib/dev/local-runtime/queue-poller.ts';
import { Logger } from '@aws-lambda-powertools/logger';
import { createEventBridgeClient, createSqsClient } from '../../lib/config/aws.ts';
import { getPrisma, type AiJob } from '../../lib/db/client.ts';
import { createJobQueues, type CreatedJobQueue } from '../../lib/queue/create-queues.ts';
import type { QueueName } from '../../lib/queue/queue-definitions.ts';
import { createDispatcherDeps, type DispatcherDeps } from '../../lib/outbox/dispatcher-deps.ts';
import { createOutboxRoutes } from '../../lib/outbox/routes.ts';
import { runDispatchCycle } from '../../lib/outbox/dispatcher.ts';
import { createJob, type CreateJobInput } from '../../lib/jobs/create-job.ts';
import { startMockAiServer, type MockAiServer, type MockAiServerOptions } from '../../lib/dev/mock-ai-server.ts';
import { jobTypeMockResponder } from '../../lib/dev/mock-responder.ts';
import { modelRouterFromEnv } from '../../lib/ai/provider-config.ts';
import { platformCredentialSet, platformKeysFromEnv } from '../../lib/credentials/platform-keys.ts';
import { createEngineDeps } from '../../lib/engine/default-engine-deps.ts';
import type { EngineDeps } from '../../lib/engine/engine-deps.ts';
import { consumeBatch } from '../../lib/engine/consumer.ts';
import type { LeaseTiming } from '../../lib/engine/lease-keeper.ts';
import { jobRegistry, type JobDefinitionRegistry } from '../../lib/jobs/registry.ts';
import type { CapacityGate } from '../../lib/capacity/gate.ts';

export const FAST_TIMING: LeaseTiming = { leaseMs: 3_000, heartbeatMs: 500, cancelPollMs: 100 };

export interface HarnessOptions {
  timing?: LeaseTiming;
  mock?: MockAiServerOptions;
  /** A second provider (`openai-compat`) tried BEFORE the mock, for fallback tests. */
  primary?: MockAiServerOptions;
  maxReceiveCount?: number;
  engine?: Partial<EngineDeps>;
  /** Job types for both creation and the engine (default: every registered type). */
  registry?: JobDefinitionRegistry;
  /** Model of the `openai-compat` provider (default `gpt-4o-mini`, a model with a price: spending caps refuse an unpriced one). */
  primaryModel?: string;
  /** Per-request provider deadline (AI_PROVIDER_TIMEOUT_MS), default 20 s. */
  providerTimeoutMs?: number;
  /** A mock standing in for DeepSeek (routes `deepseek` there), e.g. to accept only a user's own key. */
  deepseek?: MockAiServerOptions;
  /** Resolve credentials as production does (Secrets Manager / KMS on the emulator) instead of the mock key. */
  realCredentials?: boolean;
  /** Visibility timeout of both queues (default 30 s). */
  visibilityTimeoutSeconds?: number;
  /** The shared-capacity gate (default: from the environment, as production builds it; null: none). */
  capacity?: CapacityGate | null;
}

export interface EngineHarness {
  mock: MockAiServer;
  primary?: MockAiServer;
  deepseek?: MockAiServer;
  sqs: SQSClient;
  queues: Record<QueueName, CreatedJobQueue>;
  engine: EngineDeps;
  dispatcher: DispatcherDeps;
  create(req: Partial<CreateJobInput> & { input: unknown }): Promise<AiJob>;
  /** Receives what is visible on `queue` (waiting up to `waitSeconds`) and runs it through the consumer. */
  deliver(queue?: QueueName, waitSeconds?: number): Promise<{ response: SQSBatchResponse; messages: Message[] }>;
  /** Delivers until `jobId` is terminal (or the deadline passes); returns the job. */
  runUntilTerminal(jobId: string, queue?: QueueName, timeoutMs?: number): Promise<AiJob>;
  close(): Promise<void>;
}

export async function startEngineHarness(opts: HarnessOptions = {}): Promise<EngineHarness> {
  const sqs = createSqsClient();
  const stage = `t${randomBytes(4).toString('hex')}`;
  const queues = await createJobQueues(sqs, stage, { maxReceiveCount: opts.maxReceiveCount ?? 10, visibilityTimeoutSeconds: { interactive: opts.visibilityTimeoutSeconds ?? 30, background: opts.visibilityTimeoutSeconds ?? 30 } });
  const mock = await startMockAiServer({ respond: jobTypeMockResponder, ...opts.mock });
  const primary = opts.primary ? await startMockAiServer({ respond: jobTypeMockResponder, ...opts.primary }) : undefined;
  const deepseek = opts.deepseek ? await startMockAiServer({ respond: jobTypeMockResponder, ...opts.deepseek }) : undefined;
  const env = {
    MOCK_AI_BASE_URL: mock.url,
    ...(primary ? { OPENAI_COMPAT_BASE_URL: primary.url, OPENAI_COMPAT_MODEL: opts.primaryModel ?? 'gpt-4o-mini', OPENAI_COMPAT_API_KEY: 'compat-key' } : {}),
    ...(deepseek ? { DEEPSEEK_BASE_URL: deepseek.url } : {}),
    AI_PROVIDER_TIMEOUT_MS: String(opts.providerTimeoutMs ?? 20_000),
  };
  const credentials = platformCredentialSet(platformKeysFromEnv(env));
  const engine = createEngineDeps({
    router: modelRouterFromEnv(env),
    ...(opts.realCredentials ? {} : { resolveCredentials: async () => credentials }),
    timing: opts.timing ?? FAST_TIMING,
    registry: opts.registry ?? jobRegistry,
    logger: new Logger({ serviceName: 'engine-test', logLevel: 'WARN' }),
    ...(opts.capacity !== undefined ? { capacity: opts.capacity } : {}),
    ...opts.engine,
  });
  const dispatcher = createDispatcherDeps({
    db: getPrisma(),
    routes: createOutboxRoutes({
      queueUrls: { interactive: queues.interactive.queueUrl, background: queues.background.queueUrl },
      eventBusName: 'default', sqs, eventBridge: createEventBridgeClient(),
    }),
    logger: new Logger({ serviceName: 'dispatcher-test', logLevel: 'ERROR' }),
  });

  const deliver: EngineHarness['deliver'] = async (queue = 'interactive', waitSeconds = 1) => {
    const queueUrl = queues[queue].queueUrl;
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({
      QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds, MessageSystemAttributeNames: ['All'],
    }));
    const response = Messages.length === 0 ? { batchItemFailures: [] } : await consumeBatch(toSqsEvent(Messages, queues[queue].queueArn), { queueUrl, sqs, engine });
    await deleteAcknowledged(sqs, queueUrl, Messages, response);
    return { response, messages: Messages };
  };

  return {
    mock, primary, deepseek, sqs, queues, engine, dispatcher, deliver,
    create: async (req) => (await createJob(
      { userId: 'user-1', jobType: 'synthetic_job', triggerType: 'user', targetType: 'test', targetId: 't-1', ...req },
      { dispatcher, registry: opts.registry ?? jobRegistry },
    )).job,
    runUntilTerminal: async (jobId, queue = 'interactive', timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const job = await getPrisma().aiJob.findUniqueOrThrow({ where: { id: jobId } });
        if (['succeeded', 'failed', 'cancelled'].includes(job.lifecycleStatus) || Date.now() > deadline) return job;
        await runDispatchCycle(dispatcher);
        await deliver(queue, 1);
      }
    },
    close: async () => {
      await mock.close();
      await primary?.close();
      await deepseek?.close();
    },
  };
}

export { toSqsEvent };

/** A `start` that records each harness it starts, all closed after the file's tests (`afterAll`). */
export function harnessesClosedAfterAll(): (...args: Parameters<typeof startEngineHarness>) => Promise<EngineHarness> {
  const harnesses: EngineHarness[] = [];
  afterAll(async () => Promise.all(harnesses.map((h) => h.close())));
  return async (...args) => {
    const h = await startEngineHarness(...args);
    harnesses.push(h);
    return h;
  };
}
