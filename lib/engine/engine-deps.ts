/**
 * What the execution engine needs, as one object so the consumer Lambdas, the local runtime and the tests
 * build the same engine with different endpoints. Defaults: ./default-engine-deps.ts.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { AiJob, PrismaDb } from '../db/client.ts';
import type { AnswerSink, ChatRequest, CredentialSet, GenerateResult, ModelRoute, ProviderCallRecord } from '../ai/types.ts';
import type { PromptTemplate } from '../ai/prompts/prompt-template.ts';
import type { JobDefinitionRegistry } from '../jobs/registry.ts';
import type { ResultProjector } from '../jobs/projector.ts';
import type { OpenAttemptStream } from '../stream/attempt-stream.ts';
import type { LeaseTiming } from './lease-keeper.ts';
import type { PriceFn } from './usage-ledger.ts';
import type { AdmissionJob } from '../capacity/gate.ts';
import type { DbClock } from '../capacity/db-clock.ts';

export interface GenerateOptions {
  tier: string;
  credentials: CredentialSet;
  signal: AbortSignal;
  onCall: (call: ProviderCallRecord) => void | Promise<void>;
  /** Deadline from each provider call's request to its first token (the definition's, see lib/jobs/definition.ts). */
  firstTokenTimeoutMs?: number;
  /** Opens the sink of one route's call: its text as it arrives (lib/ai/gateway.ts). */
  openSink?: (route: ModelRoute) => AnswerSink;
  /** The job the call is for: admits each route's call against shared provider limits and spending caps. */
  admission?: AdmissionJob;
}

export interface EngineDeps {
  db: PrismaDb;
  registry: JobDefinitionRegistry;
  projectors: { get(key: string): ResultProjector };
  prompts: { get(key: string, version: string): PromptTemplate };
  /** The AI gateway: routes the tier to providers with fallback; throws JobFailure subclasses or an abort. */
  generate(request: ChatRequest, opts: GenerateOptions): Promise<GenerateResult>;
  resolveCredentials(job: AiJob): Promise<CredentialSet>;
  safety: { check(text: string, phase: 'input' | 'output'): Promise<void> };
  price: PriceFn;
  logger: Logger;
  /** CloudWatch metrics (EMF); published once per batch by the consumer. */
  metrics: Pick<Metrics, 'addMetric' | 'publishStoredMetrics'>;
  /** Identifies this consumer (container) as a lease holder. */
  instanceId: string;
  timing: LeaseTiming;
  /**
   * Opens the stream-log segment of an attempt, for job types that stream (definition `streaming`): the attempt
   * feeds it the previews of the model's output as it is written. Absent: previews go nowhere
   * (NO_ATTEMPT_STREAM); the job's result is the same either way. lib/stream/attempt-appender.ts is the one
   * that writes the job's stream log.
   */
  openAttemptStream?: OpenAttemptStream;
  /** The clock of capacity windows and waits (lib/capacity/db-clock.ts); default the database's. */
  capacityClock?: DbClock;
  /** Optional observation points on the attempt path; absent in production. */
  checkpoints?: EngineCheckpoints;
}

/**
 * Called at the moments a cancel may land while an attempt finishes (ADR-003 §5.4), awaited before the
 * engine goes on. Tests use them to land a cancel request exactly there, deterministically; production
 * leaves them unset. A checkpoint that throws fails the attempt like any other error.
 */
export interface EngineCheckpoints {
  /** The provider answered; the output is not validated yet. */
  afterProviderAnswer?(job: AiJob): Promise<void> | void;
  /** The output is validated (and redacted when the definition says so); projection is next. */
  afterValidation?(job: AiJob): Promise<void> | void;
  /** Inside the projection transaction (its snapshot taken), before the projector's writes and the succeeded compare-and-set. */
  insideProjection?(job: AiJob): Promise<void> | void;
}

/** Per-message hooks the consumer provides (SQS visibility of the message being processed). */
export interface MessageControl {
  extendVisibility?: (seconds: number) => Promise<void>;
  /** Aborted when the consumer abandons the delivery (it outlived its bound): the attempt must stop. */
  abandoned?: AbortSignal;
}
