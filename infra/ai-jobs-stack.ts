/**
 * The AI job engine of one stage, as one stack `AiJobs-<stage>`:
 *
 *   HTTP API (JWT) ─▶ ApiUser / ApiAdmin ─┐            EventBridge schedule (1 min) ─▶ Dispatcher, Reaper
 *                                          ├─▶ RDS Proxy ─▶ Aurora MySQL 3 Serverless v2
 *   SQS FIFO interactive ─▶ ConsumerInteractive ┤
 *   SQS FIFO background  ─▶ ConsumerBackground ─┘   Dispatcher ─▶ SQS queues, EventBridge bus (domain events)
 *
 * plus the admin console (S3 + CloudFront, the admin API on its origin: infra/console.ts), realtime push (AppSync
 * Events: infra/realtime.ts), the KMS key for user credentials, the platform provider secret, the migration trigger
 * and the alarms.
 * The stack has no `env`: it synthesizes offline, without context lookups, and deploys to whatever account
 * and region the CLI's credentials name.
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { jobRegistry } from '../lib/jobs/registry.ts';
import { PLATFORM_SECRET_PLACEHOLDER_KEY } from '../lib/credentials/platform-secret.ts';
import { JOB_QUEUE_NAMES } from '../lib/queue/queue-definitions.ts';
import { requiredMaxReceiveCount } from '../lib/queue/receive-budget.ts';
import { acknowledge } from './acknowledge.ts';
import { JobAlarms } from './alarms.ts';
import { retentionOf, type DatabaseAccess } from './app-function.ts';
import { createAppFunctions, type AppFunctions } from './app-functions.ts';
import { VISIBILITY_TO_TIMEOUT_RATIO, type StageConfig } from './config.ts';
import { AdminConsole } from './console.ts';
import { DataLayer } from './data-layer.ts';
import { JobsHttpApi } from './http-api.ts';
import { JobQueues } from './job-queues.ts';
import { JobsRealtime } from './realtime.ts';
import { deployTimeMigrations, migrationsHash } from './migrations.ts';

export interface AiJobsStackProps extends StackProps {
  config: StageConfig;
}

export class AiJobsStack extends Stack {
  readonly functions: AppFunctions;
  /** Absent on LocalStack (see `target` in infra/config.ts). */
  readonly data: DataLayer | undefined;
  /** Absent on LocalStack (AppSync is not in its free tier: readers long-poll there). */
  readonly realtime: JobsRealtime | undefined;

  constructor(scope: Construct, id: string, props: AiJobsStackProps) {
    super(scope, id, props);
    const { config } = props;
    Tags.of(this).add('project', 'ai-jobs');
    Tags.of(this).add('stage', config.stage);

    this.data = config.target === 'aws' ? new DataLayer(this, 'Data', config) : undefined;
    const database: DatabaseAccess = this.data?.access() ?? { environment: { DATABASE_URL: config.localDatabaseUrl } };
    const jobDefinitions = jobRegistry.getAll();
    const queues = new JobQueues(this, 'Queues', {
      stage: config.stage,
      jobDefinitions,
      options: {
        maxReceiveCount: config.maxReceiveCount ?? requiredMaxReceiveCount(jobDefinitions),
        visibilityTimeoutSeconds: Object.fromEntries(JOB_QUEUE_NAMES.map((q) =>
          [q, config.consumers[q].timeoutSeconds * VISIBILITY_TO_TIMEOUT_RATIO])),
      },
    });
    const bus = new events.EventBus(this, 'DomainEvents', { eventBusName: `ai-jobs-${config.stage}` });
    const { credentialsKey, platformSecret } = credentialStores(this, config);

    this.functions = createAppFunctions(this, {
      config, database, queues, bus, credentialsKey, platformSecret, migrationsHash: migrationsHash(),
    });
    const { apiUser, apiAdmin, apiStream, consumers, dispatcher, reaper, maintenance, migrate } = this.functions;
    const served = [apiUser, apiAdmin, apiStream, consumers.interactive, consumers.background, dispatcher, reaper, maintenance];
    deployTimeMigrations(this, {
      migrate, after: this.data ? [this.data] : [], before: served,
      logRetention: retentionOf(config.logRetentionDays), production: config.production,
    });

    // Every function that moves a job writes its stream's status entries, so publishes them.
    const publishers = [apiUser, apiAdmin, consumers.interactive, consumers.background, dispatcher, reaper];
    this.realtime = config.target === 'aws' ? new JobsRealtime(this, 'Realtime', { config, publishers }) : undefined;
    // LocalStack's free tier has no API Gateway v2: there the local runtime serves the API (docs/deploy.md).
    if (config.target === 'aws') {
      const http = new JobsHttpApi(this, 'Http', { config, userFunction: apiUser, adminFunction: apiAdmin, streamFunction: apiStream });
      new AdminConsole(this, 'Console', {
        config, apiUrl: http.stage.url,
        ...(this.realtime ? { realtime: { httpEndpoint: this.realtime.httpEndpoint, realtimeOrigin: `wss://${this.realtime.api.realtimeDns}` } } : {}),
      });
    }
    everyMinute(this, 'DispatcherSchedule', dispatcher);
    everyMinute(this, 'ReaperSchedule', reaper);
    scheduled(this, 'MaintenanceSchedule', maintenance, Duration.minutes(15));
    new JobAlarms(this, 'Alarms', {
      stage: config.stage,
      alarmEmail: config.alarmEmail,
      queues,
      functions: { ...Object.fromEntries(served.map((fn) => [fn.node.id, fn])), Migrate: migrate },
      ...(this.data ? { database: { cluster: this.data.cluster, proxyName: this.data.proxyName } } : {}),
      ...(this.realtime ? { realtimeApiId: this.realtime.api.apiId } : {}),
      consumers: {
        interactive: { fn: consumers.interactive, timeoutSeconds: config.consumers.interactive.timeoutSeconds },
        background: { fn: consumers.background, timeoutSeconds: config.consumers.background.timeoutSeconds },
      },
    });
    outputs(this, { queues, bus, credentialsKey, platformSecret });
  }
}

/**
 * The KMS key that wraps user credentials (always retained: deleting it would make every stored credential
 * undecryptable) and the platform provider secret (retained in production).
 */
function credentialStores(scope: Construct, config: StageConfig): { credentialsKey: kms.Key; platformSecret: secretsmanager.Secret } {
  const credentialsKey = new kms.Key(scope, 'CredentialsKey', {
    alias: `alias/ai-jobs-${config.stage}-credentials`,
    description: 'Envelope encryption of user model credentials',
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const platformSecret = new secretsmanager.Secret(scope, 'PlatformProviderKeys', {
    secretName: `ai-jobs/${config.stage}/platform-provider-keys`,
    description: 'JSON object provider name -> API key, e.g. {"deepseek":"sk-..."}; set after the first deploy',
    // Generated, never a literal SecretString: CloudFormation would write a literal back over the operator's keys
    // whenever it updates this resource. Until set, jobs in platform_key mode fail with "has no provider keys".
    generateSecretString: {
      secretStringTemplate: '{}',
      generateStringKey: PLATFORM_SECRET_PLACEHOLDER_KEY,
      excludePunctuation: true,
    },
    removalPolicy: config.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
  });
  acknowledge(platformSecret, 'AwsSolutions-SMG4',
    'Holds third-party provider API keys: they rotate at the provider, by an operator (docs/deploy.md), not by a Lambda');
  return { credentialsKey, platformSecret };
}

/** An EventBridge schedule. No retries: the next run is a minute away and runs are idempotent. */
function everyMinute(scope: Construct, id: string, fn: lambda.IFunction): events.Rule {
  return scheduled(scope, id, fn, Duration.minutes(1));
}

/**
 * An EventBridge schedule every `rate`, without retries (the next run comes anyway): none by EventBridge, and
 * none by Lambda either. EventBridge invokes the function asynchronously, and Lambda by default runs a failed
 * asynchronous invocation twice more, one and three minutes later, on top of the runs the schedule starts.
 */
function scheduled(scope: Construct, id: string, fn: lambda.IFunction, rate: Duration): events.Rule {
  fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
  return new events.Rule(scope, id, {
    schedule: events.Schedule.rate(rate),
    targets: [new targets.LambdaFunction(fn, { retryAttempts: 0, maxEventAge: Duration.minutes(1) })],
  });
}

function outputs(
  scope: Construct,
  r: { queues: JobQueues; bus: events.EventBus; credentialsKey: kms.Key; platformSecret: secretsmanager.Secret },
): void {
  for (const name of JOB_QUEUE_NAMES) {
    new CfnOutput(scope, `${name}QueueUrl`, { value: r.queues.queues[name].queueUrl });
    new CfnOutput(scope, `${name}DeadLetterQueueUrl`, { value: r.queues.deadLetterQueues[name].queueUrl });
  }
  new CfnOutput(scope, 'EventBusName', { value: r.bus.eventBusName });
  new CfnOutput(scope, 'CredentialsKeyArn', { value: r.credentialsKey.keyArn });
  new CfnOutput(scope, 'PlatformProviderSecretArn', { value: r.platformSecret.secretArn });
}

