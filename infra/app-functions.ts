/**
 * The nine Lambdas, their environment and their permissions. Least privilege, spelled out per function
 * (explicit actions rather than CDK's broader `grant*` helpers where those add actions we never call):
 *
 * - ApiUser: sqs:SendMessage on the 2 job queues (eager dispatch); kms:GenerateDataKey on the credentials key.
 * - ApiAdmin: sqs:SendMessage on the 2 job queues (retry → eager dispatch); sqs:GetQueueAttributes on the
 *   queues and DLQs (stats).
 * - ApiStream: nothing beyond the database (it reads a job's stream log).
 * - Consumer*: its own queue through the event source mapping (receive, delete, ChangeMessageVisibility);
 *   kms:Decrypt; GetSecretValue on the platform provider secret.
 * - Dispatcher: sqs:SendMessage on the 2 job queues; events:PutEvents on the bus.
 * - Reaper: sqs:ReceiveMessage and sqs:ChangeMessageVisibility on the 2 DLQs.
 * - Maintenance: nothing beyond the database (rollups and retention).
 * - Migrate: nothing beyond the database.
 *
 * Provider limits and spending-cap defaults (infra/budget-config.ts) go to the consumers (reservations), ApiUser
 * (admission at create), ApiAdmin (reads and validation of admin changes) and the Reaper (the platform's spend
 * against its cap, for its alarm); ApiAdmin also gets what decides the routed models (MOCK_AI_BASE_URL where set).
 *
 * On AWS every function reads the database secret (GetSecretValue) and reaches the database through the proxy;
 * on LocalStack it gets DATABASE_URL directly (see infra/config.ts `target`).
 */
import { Duration } from 'aws-cdk-lib';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { RETENTION_ENV } from '../lib/maintenance/retention-config.ts';
import { READ_RESERVE_ENV, STREAM_FUNCTION_TIMEOUT_SECONDS } from '../lib/stream/long-poll.ts';
import { JOB_QUEUE_NAMES, type QueueName } from '../lib/queue/queue-definitions.ts';
import { createAppFunction, type DatabaseAccess, type FunctionContext } from './app-function.ts';
import { BUNDLED_MIGRATIONS_DIR, type LambdaName } from './bundling.ts';
import { API_FUNCTION_TIMEOUT_SECONDS, type StageConfig } from './config.ts';
import { PROXY_BORROW_TIMEOUT_SECONDS } from './data-layer.ts';
import type { JobQueues } from './job-queues.ts';

export interface AppResources {
  config: StageConfig;
  database: DatabaseAccess;
  queues: JobQueues;
  bus: events.IEventBus;
  credentialsKey: kms.IKey;
  platformSecret: secretsmanager.ISecret;
  /** Content hash of prisma/migrations: a change re-runs the migration trigger. */
  migrationsHash: string;
}

export interface AppFunctions {
  apiUser: NodejsFunction;
  apiAdmin: NodejsFunction;
  /** The stream routes (a job's stream log, long-polled): a timeout of its own, longer than the API functions'. */
  apiStream: NodejsFunction;
  consumers: Record<QueueName, NodejsFunction>;
  dispatcher: NodejsFunction;
  reaper: NodejsFunction;
  maintenance: NodejsFunction;
  migrate: NodejsFunction;
}

/**
 * The user API's memory, from `npm run bench:memory-api` (docs/deploy.md, "API memory"): a container's peak RSS
 * was 263 MiB after 7,500 requests on a 24 GiB machine, 128 MiB of it V8's young generation grown to its largest
 * size (V8 sizes it from the machine's memory, smaller on a smaller function); the JavaScript heap after a full
 * collection stays ~41 MiB. 512 MB leaves a margin of 1.9 over that peak.
 */
export const API_USER_MEMORY_MB = 512;

/**
 * The admin API's memory, from `npm run bench:memory-api` with BENCH_MEMORY_API_FN=ApiAdmin (docs/deploy.md, "API
 * memory"): 5,400 reads (stats, lists, details, usage, budgets) over 100,000 finished jobs peaked at 253 MiB of RSS
 * under the heap limits Lambda's Node.js runtime sets for 512 MB (225 MiB under 256 MB's), CPU per request 6.3–6.5
 * ms either way. 512 MB leaves a margin of 2.0.
 */
export const API_ADMIN_MEMORY_MB = 512;

const CONSUMER_NAMES: Record<QueueName, LambdaName> = { interactive: 'ConsumerInteractive', background: 'ConsumerBackground' };

export function createAppFunctions(scope: Construct, r: AppResources): AppFunctions {
  const ctx = functionContext(r);
  const queueEnv = queueEnvironment(r);
  const dlqEnv = deadLetterEnvironment(r);
  const create = (name: LambdaName, props: Parameters<typeof createAppFunction>[3]) => {
    const fn = createAppFunction(scope, name, ctx, props);
    if (r.database.secret) allow(fn, ['secretsmanager:GetSecretValue'], [r.database.secret.secretArn]);
    return fn;
  };
  const api = { timeout: Duration.seconds(API_FUNCTION_TIMEOUT_SECONDS) };
  const admin = adminEnvironment(r.config);
  const budgets = r.config.budgets;
  const apiUser = create('ApiUser', { ...api, memoryMb: API_USER_MEMORY_MB, environment: { ...queueEnv, ...admin, ...budgets, ...dbPool(DB_POOL.api), CREDENTIALS_KMS_KEY_ID: r.credentialsKey.keyArn } });
  const routing: Record<string, string> = r.config.mockAiBaseUrl ? { MOCK_AI_BASE_URL: r.config.mockAiBaseUrl } : {};
  const apiAdmin = create('ApiAdmin', { ...api, memoryMb: API_ADMIN_MEMORY_MB, environment: { ...queueEnv, ...dlqEnv, ...admin, ...budgets, ...routing, ...dbPool(DB_POOL.api) } });
  const apiStream = create('ApiStream', {
    timeout: Duration.seconds(STREAM_FUNCTION_TIMEOUT_SECONDS), memoryMb: 512,
    environment: { ...admin, ...dbPool(DB_POOL.api), [READ_RESERVE_ENV]: String(streamReadReserveMs()) },
  });
  const dispatcher = create('Dispatcher', { timeout: Duration.seconds(55), environment: { ...queueEnv, ...dbPool(DB_POOL.dispatcher) } });
  const reaper = create('Reaper', { timeout: Duration.seconds(60), environment: { ...dlqEnv, ...budgets, ...dbPool(DB_POOL.reaper) } });
  const maintenance = create('Maintenance', { timeout: Duration.minutes(2), environment: { ...retentionEnvironment(r), ...dbPool(DB_POOL.maintenance) } });
  const migrate = create('Migrate', {
    timeout: Duration.minutes(10),
    environment: { MIGRATIONS_DIR: `/var/task/${BUNDLED_MIGRATIONS_DIR}`, MIGRATIONS_HASH: r.migrationsHash },
  });
  const consumers = Object.fromEntries(JOB_QUEUE_NAMES.map((queue) => [queue, createConsumer(create, queue, r, queueEnv)])) as
    Record<QueueName, NodejsFunction>;

  const jobQueueArns = r.queues.allQueues().map((q) => q.queueArn);
  const deadLetterArns = r.queues.allDeadLetterQueues().map((q) => q.queueArn);
  allow(apiUser, ['sqs:SendMessage'], jobQueueArns);
  allow(apiUser, ['kms:GenerateDataKey'], [r.credentialsKey.keyArn]);
  allow(apiAdmin, ['sqs:SendMessage'], jobQueueArns);
  allow(apiAdmin, ['sqs:GetQueueAttributes'], [...jobQueueArns, ...deadLetterArns]);
  allow(dispatcher, ['sqs:SendMessage'], jobQueueArns);
  r.bus.grantPutEventsTo(dispatcher);
  allow(reaper, ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility'], deadLetterArns);
  return { apiUser, apiAdmin, apiStream, consumers, dispatcher, reaper, maintenance, migrate };
}

/**
 * What a long-poll keeps back from its deadline before it starts a read (lib/stream/long-poll.ts): RDS Proxy's
 * borrow timeout — how long a read may wait for a database connection — plus a second to answer.
 */
export function streamReadReserveMs(): number {
  return (PROXY_BORROW_TIMEOUT_SECONDS + 1) * 1000;
}

function createConsumer(
  create: (name: LambdaName, props: Parameters<typeof createAppFunction>[3]) => NodejsFunction,
  queue: QueueName,
  r: AppResources,
  queueEnv: Record<string, string>,
): NodejsFunction {
  const settings = r.config.consumers[queue];
  const fn = create(CONSUMER_NAMES[queue], {
    timeout: Duration.seconds(settings.timeoutSeconds),
    memoryMb: settings.memoryMb,
    environment: {
      ...queueEnv,
      ...r.config.budgets,
      ...dbPool(DB_POOL.consumer(settings.batchSize)),
      PLATFORM_PROVIDER_SECRET_ID: r.platformSecret.secretArn,
      CREDENTIALS_KMS_KEY_ID: r.credentialsKey.keyArn,
      ...(r.config.deepseekBaseUrl ? { DEEPSEEK_BASE_URL: r.config.deepseekBaseUrl } : {}),
      ...(r.config.mockAiBaseUrl ? { MOCK_AI_BASE_URL: r.config.mockAiBaseUrl } : {}),
    },
  });
  // The mapping grants receive, delete and ChangeMessageVisibility (retry backoff, lease extension) on this queue only.
  fn.addEventSource(new SqsEventSource(r.queues.queues[queue], {
    batchSize: settings.batchSize,
    maxConcurrency: settings.maxConcurrency,
    reportBatchItemFailures: true,
  }));
  allow(fn, ['kms:Decrypt'], [r.credentialsKey.keyArn]);
  allow(fn, ['secretsmanager:GetSecretValue'], [r.platformSecret.secretArn]);
  return fn;
}

function functionContext(r: AppResources): FunctionContext {
  return {
    stage: r.config.stage,
    production: r.config.production,
    logRetentionDays: r.config.logRetentionDays,
    database: r.database,
  };
}

/**
 * Where the job queues and the bus are, and the queue options — the variables lib/config/aws.ts reads, so
 * `jobQueueDefinitions(stageFromEnv(env), queueOptionsFromEnv(env))` in a function equals the stack's queues.
 */
function queueEnvironment(r: AppResources): Record<string, string> {
  const { queues, definitions } = r.queues;
  return {
    INTERACTIVE_QUEUE_URL: queues.interactive.queueUrl,
    BACKGROUND_QUEUE_URL: queues.background.queueUrl,
    EVENT_BUS_NAME: r.bus.eventBusName,
    QUEUE_MAX_RECEIVE_COUNT: String(definitions.interactive.maxReceiveCount),
    INTERACTIVE_VISIBILITY_TIMEOUT_SECONDS: String(definitions.interactive.queue.visibilityTimeoutSeconds),
    BACKGROUND_VISIBILITY_TIMEOUT_SECONDS: String(definitions.background.queue.visibilityTimeoutSeconds),
  };
}

/** The dead-letter queues the reaper reads and the admin stats count (lib/engine/reaper-run.ts). */
function deadLetterEnvironment(r: AppResources): Record<string, string> {
  return {
    INTERACTIVE_DLQ_URL: r.queues.deadLetterQueues.interactive.queueUrl,
    BACKGROUND_DLQ_URL: r.queues.deadLetterQueues.background.queueUrl,
  };
}

/**
 * Connections per pool (each function has two: Prisma's and the raw one) — what one container can use at
 * once, never kept open beyond the first after 30 s idle (lib/db/database-url.ts `poolOptions`; why in
 * docs/deploy.md, "RDS Proxy: what the application sends"). API: one request at a time, 2 for a query
 * beside a transaction. Dispatcher: one raw connection per batch in flight (3). Consumers: one per record
 * processed in parallel, plus one for a heartbeat beside a projection.
 */
export const DB_POOL = {
  api: 2,
  dispatcher: 3,
  reaper: 2,
  maintenance: 2,
  consumer: (batchSize: number) => batchSize + 1,
} as const;

/** The stage's retention settings, as lib/maintenance/retention-config.ts reads them. */
function retentionEnvironment(r: AppResources): Record<string, string> {
  const { outboxPublishedDays, outboxFailedDays, usageLedgerDays, revokedCredentialDays, streamDays } = r.config.retention;
  return {
    [RETENTION_ENV.outboxPublishedDays]: String(outboxPublishedDays),
    [RETENTION_ENV.outboxFailedDays]: String(outboxFailedDays),
    [RETENTION_ENV.usageLedgerDays]: String(usageLedgerDays),
    [RETENTION_ENV.revokedCredentialDays]: String(revokedCredentialDays),
    [RETENTION_ENV.streamDays]: String(streamDays),
  };
}

/**
 * Which token claim holds the caller's groups and which group is admin, and the issuer the authorizer verifies:
 * a Cognito user pool's flattened group lists split on spaces (lib/api/auth.ts reads these).
 */
function adminEnvironment(config: StageConfig): Record<string, string> {
  return { ADMIN_CLAIM: config.adminClaim, ADMIN_GROUP: config.adminGroup, JWT_ISSUER: config.jwtIssuer };
}

function dbPool(connections: number): Record<string, string> {
  return { DATABASE_CONNECTION_LIMIT: String(connections) };
}

function allow(fn: IFunction, actions: string[], resources: string[]): void {
  fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources }));
}
