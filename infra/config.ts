/**
 * The deployment's settings, from CDK context. Resolution, later wins:
 *   built-in defaults → `stages.<stage>` in cdk.json → a top-level context key (cdk.json or `-c key=value`).
 * So `npx cdk synth -c stage=prod -c backgroundConcurrency=8` changes one setting of prod. CDK does not tell a
 * top-level key of cdk.json from a `-c`, so one there would override every stage's: cdk.json keeps settings
 * only in `stages.<stage>` (test/infra/deploy-pipeline.test.ts checks it).
 *
 * Nothing here looks anything up in an AWS account: the stack synthesizes offline.
 */
import type { Node } from 'constructs';
import { JOB_QUEUE_NAMES, type QueueName } from '../lib/queue/queue-definitions.ts';
import { budgetSettings, type BudgetSettings } from './budget-config.ts';

/** The API functions' timeout. API Gateway's own integration timeout is 30 s; an answer should come well before. */
export const API_FUNCTION_TIMEOUT_SECONDS = 15;

/** SQS advises a visibility timeout of at least six times the consumer's timeout. */
export const VISIBILITY_TO_TIMEOUT_RATIO = 6;

/** How one queue's consumer Lambda runs. */
export interface ConsumerSettings {
  /** Records per invocation (FIFO: at most 10). */
  batchSize: number;
  /** Event source mapping's maximum concurrency (2–1000): caps parallel invocations for this queue. */
  maxConcurrency: number;
  /** Lambda timeout; the queue's visibility timeout is {@link VISIBILITY_TO_TIMEOUT_RATIO} times this. */
  timeoutSeconds: number;
  memoryMb: number;
}

/** Where the stack deploys: AWS, or LocalStack's free tier (see docs/deploy.md). */
export type DeployTarget = 'aws' | 'localstack';

export interface StageConfig {
  stage: string;
  /**
   * `localstack`: the free-tier fallback — no VPC, Aurora, RDS Proxy or HTTP API (not in LocalStack's free
   * tier); functions reach the MySQL of docker-compose.yml through `localDatabaseUrl`.
   */
  target: DeployTarget;
  localDatabaseUrl: string;
  /** Retain data and keys on delete, deletion protection, longer backups and logs. */
  production: boolean;
  jwtIssuer: string;
  jwtAudience: string[];
  /**
   * OAuth scope API Gateway requires on admin routes (checked against the token's `scope`/`scp`), on top of the
   * admin Lambda's own `SUPER_ADMIN` role check. Unset by default: role claims are not scopes.
   */
  adminScope: string | undefined;
  /** The token claim the API Lambdas read the caller's groups from (`ADMIN_CLAIM`; default `cognito:groups`). */
  adminClaim: string;
  /** The group in {@link adminClaim} that makes a caller an admin (`ADMIN_GROUP`; default `SUPER_ADMIN`). */
  adminGroup: string;
  /** Browser origins allowed by CORS on the HTTP API; empty (the default) turns CORS off. */
  corsOrigins: string[];
  /**
   * AZ names the VPC (and so the RDS Proxy) uses, e.g. `["us-east-1a","us-east-1b"]`: RDS Proxy is not offered
   * in every AZ, so a stage pins AZs whose IDs it supports. Unset: the first two AZs of the region
   * (`Fn::GetAZs`, no lookup). See docs/deploy.md "Availability zones".
   */
  availabilityZones: string[] | undefined;
  /**
   * Interface VPC endpoints for the AWS APIs the functions call (SQS, KMS, Secrets Manager, EventBridge,
   * CloudWatch Logs/monitoring), so that traffic skips the NAT gateways. Costs per AZ-hour: see docs/deploy.md.
   */
  vpcEndpoints: boolean;
  /**
   * Receives before a message goes to its DLQ. Unset: derived from the job registry
   * (lib/queue/receive-budget.ts); set lower than a definition needs, synth fails.
   */
  maxReceiveCount: number | undefined;
  natGateways: number;
  consumers: Record<QueueName, ConsumerSettings>;
  database: { minCapacity: number; maxCapacity: number; readers: number; requireTls: boolean };
  apiThrottle: { rateLimit: number; burstLimit: number };
  /** Receives every alarm by email when set. */
  alarmEmail: string | undefined;
  deepseekBaseUrl: string | undefined;
  /** LocalStack only: the mock AI server (lib/dev/mock-ai-server.ts) the consumers may fall back to. */
  mockAiBaseUrl: string | undefined;
  logRetentionDays: number;
  /** Retention run (functions/maintenance.ts); `keep` never deletes. Defaults in lib/maintenance/retention-config.ts. */
  retention: {
    outboxPublishedDays: number; outboxFailedDays: number | 'keep'; usageLedgerDays: number | 'keep'; revokedCredentialDays: number | 'keep';
    /** Days a finished job's stream chunks are kept (docs/streaming.md). */
    streamDays: number | 'keep';
  };
  /** The admin console's own host name (needs {@link consoleCertificateArn}); default the CloudFront domain. */
  consoleDomainName: string | undefined;
  /** An ACM certificate in us-east-1 for {@link consoleDomainName}. */
  consoleCertificateArn: string | undefined;
  /** The OIDC client (e.g. Cognito app client, no secret) the console signs in with. */
  consoleClientId: string | undefined;
  /** Provider limits and spending-cap defaults as the functions' environment (./budget-config.ts). */
  budgets: BudgetSettings;
}

/** A context value is missing or out of range. */
export class StageConfigError extends Error {
  constructor(readonly key: string, reason: string) {
    super(`context "${key}" ${reason}`);
    this.name = 'StageConfigError';
  }
}

type Flat = Record<string, unknown>;

/** Every setting's context key and its built-in default (before `stages.<stage>`). */
const DEFAULTS: Flat = {
  jwtAudience: 'ai-jobs-api',
  adminClaim: 'cognito:groups',
  adminGroup: 'SUPER_ADMIN',
  vpcEndpoints: false,
  natGateways: 1,
  // Consumers: memory and batch size from `npm run bench:memory` (docs/deploy.md "Consumer memory and batches"):
  // a container's peak RSS is mostly fixed (the bundle, its pools), an ordinary job in flight adds a few MiB;
  // background answers can be ~100 KB, and a throttled container falling behind one holds far more (512 MB).
  interactiveBatchSize: 5,
  interactiveConcurrency: 10,
  interactiveTimeoutSeconds: 90,
  interactiveMemoryMb: 320,
  backgroundBatchSize: 5,
  backgroundConcurrency: 2,
  backgroundTimeoutSeconds: 300,
  backgroundMemoryMb: 512,
  dbMinCapacity: 0.5,
  dbMaxCapacity: 4,
  dbReaders: 0,
  dbRequireTls: true,
  apiRateLimit: 50,
  apiBurstLimit: 100,
  logRetentionDays: 30,
  retentionOutboxPublishedDays: 7,
  retentionOutboxFailedDays: 'keep',
  retentionUsageLedgerDays: 400,
  retentionRevokedCredentialDays: 30,
  retentionStreamDays: 7,
  target: 'aws',
  localDatabaseUrl: 'mysql://root@mysql:3306/ai_jobs',
};

/** Typed access to the context values of one stage. */
interface Reader {
  raw(key: string): unknown;
  num(key: string, min: number, max: number): number;
}

/** Reads and validates the settings of the stage named by the `stage` context key (default `dev`). */
export function loadStageConfig(node: Node): StageConfig {
  const stage = String(node.tryGetContext('stage') ?? 'dev');
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) throw new StageConfigError('stage', 'must be lower-case letters, digits and -');
  const stages = (node.tryGetContext('stages') ?? {}) as Record<string, Flat>;
  const raw = (key: string): unknown => node.tryGetContext(key) ?? stages[stage]?.[key] ?? DEFAULTS[key];
  const r: Reader = { raw, num: (key, min, max) => numberSetting(key, raw(key), min, max) };
  const target = String(raw('target'));
  if (target !== 'aws' && target !== 'localstack') throw new StageConfigError('target', 'must be aws or localstack');
  return {
    stage,
    target,
    localDatabaseUrl: stringSetting('localDatabaseUrl', raw('localDatabaseUrl')),
    production: booleanSetting('production', raw('production') ?? stage === 'prod'),
    // No default: a stage without its own issuer must not deploy with another stage's (or the example's).
    jwtIssuer: urlSetting('jwtIssuer', raw('jwtIssuer'), `set stages.${stage}.jwtIssuer in cdk.json, or pass -c jwtIssuer=https://…`),
    jwtAudience: listSetting('jwtAudience', raw('jwtAudience')),
    adminScope: optionalString(raw('adminScope')),
    adminClaim: stringSetting('adminClaim', raw('adminClaim')),
    adminGroup: stringSetting('adminGroup', raw('adminGroup')),
    corsOrigins: corsOrigins(raw('corsOrigins')),
    availabilityZones: availabilityZones(raw('availabilityZones')),
    vpcEndpoints: booleanSetting('vpcEndpoints', raw('vpcEndpoints')),
    maxReceiveCount: raw('maxReceiveCount') === undefined ? undefined : r.num('maxReceiveCount', 1, 1000),
    natGateways: r.num('natGateways', 1, 3),
    consumers: Object.fromEntries(JOB_QUEUE_NAMES.map((q) => [q, consumerSettings(r, q)])) as Record<QueueName, ConsumerSettings>,
    database: {
      minCapacity: r.num('dbMinCapacity', 0, 256),
      maxCapacity: r.num('dbMaxCapacity', 1, 256),
      readers: r.num('dbReaders', 0, 15),
      requireTls: booleanSetting('dbRequireTls', raw('dbRequireTls')),
    },
    apiThrottle: { rateLimit: r.num('apiRateLimit', 1, 10_000), burstLimit: r.num('apiBurstLimit', 1, 5_000) },
    alarmEmail: optionalString(raw('alarmEmail')),
    deepseekBaseUrl: optionalString(raw('deepseekBaseUrl')),
    mockAiBaseUrl: mockAiBaseUrl(target, raw('mockAiBaseUrl')),
    logRetentionDays: r.num('logRetentionDays', 1, 3653),
    retention: {
      outboxPublishedDays: r.num('retentionOutboxPublishedDays', 1, 3653),
      outboxFailedDays: raw('retentionOutboxFailedDays') === 'keep' ? 'keep' : r.num('retentionOutboxFailedDays', 1, 36500),
      usageLedgerDays: raw('retentionUsageLedgerDays') === 'keep' ? 'keep' : r.num('retentionUsageLedgerDays', 1, 36500),
      revokedCredentialDays: raw('retentionRevokedCredentialDays') === 'keep' ? 'keep' : r.num('retentionRevokedCredentialDays', 1, 36500),
      streamDays: raw('retentionStreamDays') === 'keep' ? 'keep' : r.num('retentionStreamDays', 1, 36500),
    },
    consoleDomainName: optionalString(raw('consoleDomainName')),
    consoleCertificateArn: optionalString(raw('consoleCertificateArn')),
    consoleClientId: optionalString(raw('consoleClientId')),
    budgets: budgetSettings(raw, (key, reason) => new StageConfigError(key, reason)),
  };
}

/** Deployed stages never route to the mock provider (lib/ai/provider-config.ts); LocalStack may. */
function mockAiBaseUrl(target: DeployTarget, raw: unknown): string | undefined {
  const value = optionalString(raw);
  if (value && target !== 'localstack') throw new StageConfigError('mockAiBaseUrl', 'is allowed only with target=localstack');
  return value;
}

/** Exact https origins (`https://app.example.com`), or `http://localhost:<port>` for development. */
function corsOrigins(raw: unknown): string[] {
  if (raw === undefined || raw === '' || (Array.isArray(raw) && raw.length === 0)) return [];
  const origins = listSetting('corsOrigins', raw);
  for (const origin of origins) {
    const url = URL.canParse(origin) ? new URL(origin) : undefined;
    const ok = url && url.origin === origin && (url.protocol === 'https:' || url.hostname === 'localhost');
    if (!ok) throw new StageConfigError('corsOrigins', `has "${origin}"; each must be an origin like https://app.example.com (no *, path or trailing /)`);
  }
  return origins;
}

/** At least two AZ names of one region (RDS needs two for its subnet group). */
function availabilityZones(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  const zones = listSetting('availabilityZones', raw);
  if (zones.length < 2 || zones.some((z) => !/^[a-z]{2}(-[a-z]+)+-\d[a-z]$/.test(z))) {
    throw new StageConfigError('availabilityZones', 'must name at least two AZs, e.g. us-east-1a,us-east-1b');
  }
  return zones;
}

function consumerSettings(r: Reader, queue: QueueName): ConsumerSettings {
  return {
    batchSize: r.num(`${queue}BatchSize`, 1, 10),
    maxConcurrency: r.num(`${queue}Concurrency`, 2, 1000),
    timeoutSeconds: r.num(`${queue}TimeoutSeconds`, 10, 900),
    memoryMb: r.num(`${queue}MemoryMb`, 128, 10240),
  };
}

function numberSetting(key: string, raw: unknown, min: number, max: number): number {
  const value = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new StageConfigError(key, `must be a number from ${min} to ${max}`);
  }
  return value;
}

function booleanSetting(key: string, raw: unknown): boolean {
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new StageConfigError(key, 'must be true or false');
}

function stringSetting(key: string, raw: unknown): string {
  const value = optionalString(raw);
  if (!value) throw new StageConfigError(key, 'must be set');
  return value;
}

function optionalString(raw: unknown): string | undefined {
  return typeof raw === 'string' && raw.trim() ? raw.trim() : undefined;
}

function urlSetting(key: string, raw: unknown, whenUnset?: string): string {
  if (whenUnset && !optionalString(raw)) throw new StageConfigError(key, `must be set: ${whenUnset}`);
  const value = stringSetting(key, raw);
  if (!URL.canParse(value) || new URL(value).protocol !== 'https:') throw new StageConfigError(key, 'must be an https URL');
  return value;
}

/** A list from a JSON array or a comma-separated string (the form `-c key=a,b` gives). */
function listSetting(key: string, raw: unknown): string[] {
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : [];
  const list = items.map((item) => String(item).trim()).filter(Boolean);
  if (list.length === 0) throw new StageConfigError(key, 'must name at least one value');
  return list;
}
