/**
 * What a job type is (ADR-003 §2.1): routing, retry and timeout policy, prompt and model tier, credential
 * modes, projector, security flags and per-user limits, plus zod schemas for its input and output.
 * Adding a job type means writing one of these in `lib/job-types/` and nothing else: no code branches on
 * `jobType`. The registry validates every definition with {@link registrableJobDefinitionSchema}.
 */
import * as z from 'zod';
import type { CredentialMode } from '../db/generated/enums.ts';
import { InputValidationError, toIssueDetails } from './errors.ts';
import { resolveStreamingPlan, streamingSpecSchema, type StreamingPlan } from './streaming-spec.ts';

/** `jobType` syntax: lower snake case, 2–64 characters (fits `AiJob.jobType`). */
export const JOB_TYPE_PATTERN = /^[a-z][a-z0-9_]{1,63}$/;

/** The SQS FIFO queues a job can be routed to. */
export const QUEUE_NAMES = ['interactive', 'background'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** Mirrors the `CredentialMode` enum in prisma/schema.prisma. */
export const CREDENTIAL_MODES = ['platform_key', 'user_deepseek_key'] as const satisfies readonly CredentialMode[];

export const JOB_DOMAINS = ['analysis', 'generation', 'import', 'maintenance'] as const;

/**
 * First-token deadline of a job type that does not set `execution.firstTokenTimeoutMs`: how long one provider
 * call may go without sending a token of its answer before the gateway gives up on it (and falls back to the
 * next route). Generous for a standard model, which starts within seconds; a job's own `timeoutMs` still bounds
 * the whole attempt, so the earlier of the two wins.
 */
export const DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 30_000;

/** Snapshot retention of a job type that does not set `retention.snapshotDays`. */
export const DEFAULT_SNAPSHOT_DAYS = 30;

/** Bounds checked at registration. Timeouts stay under Lambda's 15 min; backoff under SQS's 12 h visibility. */
export const DEFINITION_LIMITS = {
  minTimeoutMs: 1_000,
  maxTimeoutMs: 600_000,
  maxRetries: 10,
  minBackoffDelayMs: 100,
  maxBackoffDelayMs: 600_000,
  maxBackoffCapMs: 43_200_000,
} as const;

/** Short lower-case identifiers: prompt keys, projector keys, model tiers. */
const slug = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[a-z][a-z0-9_.-]*$/, 'must be lower case letters, digits, "_", "." or "-", starting with a letter');

const versionTag = z.string().min(1).max(32);
const positiveInt = z.number().int().min(1);

const retryBackoffSchema = z
  .strictObject({
    type: z.literal('exponential'),
    /** Delay before the first retry; doubles on each further retry. */
    delayMs: z.number().int().min(DEFINITION_LIMITS.minBackoffDelayMs).max(DEFINITION_LIMITS.maxBackoffDelayMs),
    /** Cap on any single retry delay. */
    maxDelayMs: z.number().int().max(DEFINITION_LIMITS.maxBackoffCapMs),
  })
  .refine((b) => b.maxDelayMs >= b.delayMs, { message: 'maxDelayMs must be at least delayMs', path: ['maxDelayMs'] });

const credentialSchema = z
  .strictObject({
    allowedModes: z
      .array(z.enum(CREDENTIAL_MODES))
      .min(1)
      .refine((modes) => new Set(modes).size === modes.length, { message: 'allowedModes must not repeat a mode' }),
    defaultMode: z.enum(CREDENTIAL_MODES),
  })
  .refine((c) => c.allowedModes.includes(c.defaultMode), {
    message: 'defaultMode must be one of allowedModes',
    path: ['defaultMode'],
  });

/**
 * The data part of a definition (everything except the zod schemas). Objects are strict, so a misspelt
 * field fails registration instead of being ignored.
 */
export const jobDefinitionSchema = z.strictObject({
  jobType: z.string().regex(JOB_TYPE_PATTERN, `must match ${JOB_TYPE_PATTERN.source}`),
  metadata: z.strictObject({
    label: z.string().min(1).max(128),
    description: z.string().max(1024),
    domain: z.enum(JOB_DOMAINS),
    version: versionTag,
  }),
  queue: z.strictObject({
    queueName: z.enum(QUEUE_NAMES),
    /** 0 = most urgent, 100 = least (ADR-003 §2.1). */
    defaultPriority: z.number().int().min(0).max(100),
    /** FIFO message group: `job` runs jobs in parallel; `user` runs one user's jobs of this type in order. */
    messageGroup: z.enum(['job', 'user']).default('job'),
  }),
  execution: z.strictObject({
    timeoutMs: z.number().int().min(DEFINITION_LIMITS.minTimeoutMs).max(DEFINITION_LIMITS.maxTimeoutMs),
    /**
     * Deadline from each provider call's request to the first token of its answer (default
     * {@link DEFAULT_FIRST_TOKEN_TIMEOUT_MS}); at most `timeoutMs`. Passing it is PROVIDER_TIMEOUT
     * (ProviderFirstTokenTimeoutError): retryable, and the gateway falls back to the next route first.
     */
    firstTokenTimeoutMs: z.number().int().min(DEFINITION_LIMITS.minTimeoutMs).max(DEFINITION_LIMITS.maxTimeoutMs).optional(),
    /** Retries after the first attempt; see {@link maxAttemptsOf}. */
    maxRetries: z.number().int().min(0).max(DEFINITION_LIMITS.maxRetries),
    retryBackoff: retryBackoffSchema,
    cancellable: z.boolean(),
    /** What a timeout does: fail the job, or count as a retryable failure (ADR-003 §5.2). */
    abortStrategy: z.enum(['fail', 'retry']),
  }).refine((e) => e.firstTokenTimeoutMs === undefined || e.firstTokenTimeoutMs <= e.timeoutMs, {
    message: 'firstTokenTimeoutMs must not exceed timeoutMs',
    path: ['firstTokenTimeoutMs'],
  }),
  input: z.strictObject({ schemaVersion: versionTag }),
  output: z.strictObject({ schemaVersion: versionTag }),
  prompt: z.strictObject({ key: slug(64), version: versionTag }),
  /** Model routing picks a provider model for the tier (e.g. `fast`, `standard`, `reasoning`). */
  model: z.strictObject({ tier: slug(32) }),
  credential: credentialSchema,
  /** Key of the result projector that writes business rows; absent when the job has no side effects. */
  projector: slug(64).optional(),
  security: z.strictObject({
    contentSafetyCheck: z.boolean(),
    outputRedaction: z.boolean(),
  }),
  limits: z.strictObject({
    maxActiveJobsPerUser: positiveInt,
    dailyQuotaPerUser: positiveInt,
  }),
  /**
   * What the job previews while the model writes (./streaming-spec.ts): `text` fields grow, `items` fields'
   * elements appear one by one. Absent: nothing streams, and the job's watchers see its status only.
   */
  streaming: streamingSpecSchema.optional(),
  /** What the retention run (lib/maintenance/retention.ts) deletes, and when (docs/data-at-scale.md). */
  retention: z.strictObject({
    /** Days a job's snapshot (learner text) is kept after creation: its `expiresAt` (ADR-003 §8.4). */
    snapshotDays: z.number().int().min(1).max(3650).default(DEFAULT_SNAPSHOT_DAYS),
    /** Opt-in: delete finished jobs of this type, with their business rows, this many days after they finished. */
    deleteJobsAfterDays: z.number().int().min(1).max(36500).optional(),
  }).default({ snapshotDays: DEFAULT_SNAPSHOT_DAYS }),
});

const zodSchemaRef = z.custom<z.ZodType>((value) => value instanceof z.ZodType, 'must be a zod schema');

/**
 * {@link jobDefinitionSchema} plus the input and output schemas: what the registry parses. The `streaming` spec is
 * checked against the output schema here (its fields must exist with the right kind).
 */
export const registrableJobDefinitionSchema = jobDefinitionSchema
  .extend({
    inputSchema: zodSchemaRef,
    outputSchema: zodSchemaRef,
  })
  .superRefine((def, ctx) => {
    // Only a well-formed spec against a zod output schema (the fields' own errors are reported already).
    if (!def.streaming || !(def.outputSchema instanceof z.ZodType) || !streamingSpecSchema.safeParse(def.streaming).success) return;
    const resolved = resolveStreamingPlan(def.streaming, def.outputSchema);
    if ('problems' in resolved) {
      for (const message of resolved.problems) ctx.addIssue({ code: 'custom', message, path: ['streaming'] });
    }
  });

/** The validated data part, defaults applied. */
export type JobDefinitionMetadata = z.output<typeof jobDefinitionSchema>;

/** The schemas of a job type: `I` is the parsed job input, `O` the validated output. */
export interface JobSchemas<I, O> {
  inputSchema: z.ZodType<I>;
  outputSchema: z.ZodType<O>;
}

/** A definition as written in `lib/job-types/` (defaults not yet applied). */
export type JobDefinitionSpec<I = unknown, O = unknown> = z.input<typeof jobDefinitionSchema> & JobSchemas<I, O>;

/** A registered definition: validated, defaults applied, frozen. */
export type JobDefinition<I = unknown, O = unknown> = JobDefinitionMetadata & JobSchemas<I, O>;

/**
 * Types a definition in a `lib/job-types/` module, inferring `I` and `O` from its schemas. It does not
 * validate or register; `lib/job-types/index.ts` registers every definition at startup.
 */
export function defineJob<I, O>(spec: JobDefinitionSpec<I, O>): JobDefinitionSpec<I, O> {
  return spec;
}

/** The first-token deadline of one provider call of this type (see `execution.firstTokenTimeoutMs`). */
export function firstTokenTimeoutOf(def: Pick<JobDefinitionMetadata, 'execution'>): number {
  return def.execution.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS;
}

/**
 * What a registered definition previews while the model writes, resolved against its output schema; undefined
 * when it streams nothing. Registration already checked the spec, so this never fails for a registered type.
 */
export function streamingPlanOf(def: Pick<JobDefinition, 'streaming' | 'outputSchema'>): StreamingPlan | undefined {
  if (!def.streaming) return undefined;
  const resolved = resolveStreamingPlan(def.streaming, def.outputSchema);
  return 'plan' in resolved ? resolved.plan : undefined;
}

/** Attempts a job of this type may make: the first one plus `maxRetries` (stored as `AiJob.maxAttempts`). */
export function maxAttemptsOf(def: Pick<JobDefinitionMetadata, 'execution'>): number {
  return def.execution.maxRetries + 1;
}

/**
 * Parses a job's input with its definition's input schema.
 * @throws InputValidationError listing each failing field (never the values).
 */
export function parseJobInput<I>(def: Pick<JobDefinition<I>, 'jobType' | 'inputSchema'>, input: unknown): I {
  const result = def.inputSchema.safeParse(input);
  if (!result.success) throw new InputValidationError(def.jobType, toIssueDetails(result.error), { cause: result.error });
  return result.data;
}
