/**
 * What the API returns, as zod schemas (strict: the views in ./views.ts must produce exactly these fields).
 * They document the API (OpenAPI components, generated with `io: 'output'`) and tests parse real responses
 * with them. `JobStatusResponse` is frozen by ADR-003 §7.2: add nothing to it; admin views extend it.
 */
import * as z from 'zod';
import { OutboxStatus } from '../db/generated/enums.ts';
import { CREDENTIAL_MODES, QUEUE_NAMES } from '../jobs/definition.ts';
import { JOB_STATES } from '../jobs/states.ts';
import { streamEntrySchema, streamPageSchema } from '../stream/protocol.ts';

/** Registry of the response schemas that appear as OpenAPI components. */
export const responseSchemas = z.registry<{ id: string; description?: string }>();

const timestamp = z.iso.datetime();
const count = z.number().int().min(0);
const lifecycleStatus = z.enum(JOB_STATES);
/** Decimal USD as text (e.g. `"0.00012000"`): sums of DECIMAL(14,8) stay exact. */
const usd = z.string().regex(/^\d+\.\d{8}$/);

export const errorResponseSchema = z
  .strictObject({
    error: z.strictObject({
      code: z.string().describe('Stable machine-readable code, e.g. JOB_NOT_FOUND'),
      message: z.string().describe('Human-readable and safe to show; never internal detail'),
      details: z
        .array(z.strictObject({ path: z.string().describe('`body.x`, `query.x`, `path.x` or `header.x`'), message: z.string() }))
        .optional()
        .describe('VALIDATION_FAILED only: one entry per invalid field'),
    }),
  })
  .register(responseSchemas, { id: 'ErrorResponse' });

export const jobStatusResponseSchema = z
  .strictObject({
    jobId: z.string(),
    jobType: z.string(),
    lifecycleStatus,
    queueName: z.string(),
    priority: z.number().int(),
    progress: z.number().int().min(0).max(100),
    createdAt: timestamp,
    startedAt: timestamp.optional(),
    finishedAt: timestamp.optional(),
    errorCode: z.string().optional(),
    publicErrorMessage: z.string().optional(),
    result: z
      .strictObject({
        artifactCount: count,
        artifacts: z.array(z.strictObject({ artifactType: z.string(), artifactId: z.string() })),
      })
      .optional()
      .describe('Present when the job succeeded: the business rows it wrote'),
  })
  .register(responseSchemas, { id: 'JobStatusResponse', description: 'Job status (ADR-003 §7.2, frozen)' });

export const jobListResponseSchema = z
  .strictObject({ items: z.array(jobStatusResponseSchema), nextCursor: z.string().nullable() })
  .register(responseSchemas, { id: 'JobListResponse' });

export const credentialResponseSchema = z
  .strictObject({
    provider: z.string(),
    fingerprint: z.string().describe('Identifies the key without revealing it'),
    createdAt: timestamp,
  })
  .register(responseSchemas, { id: 'CredentialResponse' });

const adminSummaryFields = {
  ...jobStatusResponseSchema.shape,
  userId: z.string(),
  triggerType: z.string(),
  attemptCount: count,
  maxAttempts: count,
  parentJobId: z.string().nullable(),
};

export const adminJobSummarySchema = z.strictObject(adminSummaryFields).register(responseSchemas, { id: 'AdminJobSummary' });

export const adminJobListResponseSchema = z
  .strictObject({ items: z.array(adminJobSummarySchema), nextCursor: z.string().nullable() })
  .register(responseSchemas, { id: 'AdminJobListResponse' });

const tokenTotals = {
  calls: count,
  promptTokens: count,
  completionTokens: count,
  totalTokens: count,
  costUsd: usd,
};

export const adminJobDetailSchema = z
  .strictObject({
    ...adminSummaryFields,
    targetType: z.string(),
    targetId: z.string(),
    credentialMode: z.enum(CREDENTIAL_MODES),
    modelProvider: z.string().nullable(),
    modelName: z.string().nullable(),
    cancelRequestedAt: timestamp.nullable(),
    internalErrorMessage: z.string().nullable().describe('Internal failure detail; admins only'),
    transitions: z.array(
      z.strictObject({
        fromStatus: lifecycleStatus.nullable(),
        toStatus: lifecycleStatus,
        actor: z.string(),
        reason: z.string().nullable(),
        errorCode: z.string().nullable(),
        leaseVersion: z.number().int().nullable(),
        createdAt: timestamp,
      }),
    ),
    usage: z.strictObject({
      attempts: z.array(z.strictObject({
        attemptNo: z.number().int(), ...tokenTotals, models: z.array(z.string()),
        latencyMs: count.describe('Sum of the provider calls\' latencies in this attempt'),
        errorCodes: z.array(z.string()).describe('Error codes of this attempt\'s failed provider calls, in call order (distinct)'),
      })),
      total: z.strictObject(tokenTotals),
    }),
    inputSnapshot: z
      .strictObject({
        content: z.unknown().describe('The input the job runs on, redacted (secret-named fields and secret-shaped text are [REDACTED])'),
        schemaVersion: z.string(),
        redactionVersion: z.number().int(),
        createdAt: timestamp,
        expiresAt: timestamp.nullable(),
      })
      .nullable()
      .describe('Null when retention deleted the snapshot'),
    businessRows: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('A succeeded job\'s business rows, as its type\'s result route returns them (e.g. QuizGenerationResult); null otherwise'),
    waitingFor: z
      .strictObject({
        reason: z.enum(['provider_capacity', 'spend_cap']),
        until: timestamp.describe('When the job is due to try again (its message comes back then)'),
        since: timestamp.describe('When this wait began'),
        provider: z.string().nullable().describe('The model it waits for (provider capacity); null for a spending cap'),
        model: z.string().nullable(),
      })
      .nullable()
      .describe('A job parked between deliveries, no attempt spent (docs/budgets.md): why it waits and until when; null otherwise. Its owner sees the same on the stream (`waitingFor` of a status entry)'),
  })
  .register(responseSchemas, { id: 'AdminJobDetail' });

const queueDepth = z.strictObject({
  approximateMessages: count.nullable(),
  approximateMessagesNotVisible: count.nullable(),
});

const terminalCounts = z.strictObject({ succeeded: count, failed: count, cancelled: count });
const finishedWindow = z.strictObject({ byStatus: terminalCounts, byType: z.record(z.string(), terminalCounts) });

export const statsResponseSchema = z
  .strictObject({
    generatedAt: timestamp,
    jobs: z.strictObject({
      byStatus: z.record(lifecycleStatus, count).describe('All jobs per state: open ones counted now, finished ones all-time (exact)'),
      byType: z.record(z.string(), z.record(lifecycleStatus, count)),
      finished: z.strictObject({
        lastHour: finishedWindow.describe('Finished in the last 60 minutes (exact)'),
        last24h: finishedWindow.describe('Finished since the start of the hour 23 hours ago (exact; hour-aligned)'),
        perDay: z.array(finishedWindow.extend({ day: z.string().describe('UTC day, YYYY-MM-DD') })).describe('The last 7 UTC days, today last'),
        perHour: z.array(z.strictObject({ hour: timestamp.describe('Start of the UTC hour'), byStatus: terminalCounts }))
          .describe('The 24 hours of last24h, oldest first (the current hour last)'),
        rollupCoveredUntil: timestamp.nullable().describe('Jobs finished before this come from the hourly rollup, later ones are counted live'),
      }),
    }),
    outbox: z.strictObject({
      byStatus: z.record(z.enum(OutboxStatus), count).describe('Outbox rows per status, exact (`published`: up to 100,000, see publishedCapped)'),
      publishedCapped: z.boolean().describe('True when more than 100,000 published rows are kept: `published` is then 100,000, a lower bound'),
    }),
    queues: z.array(
      z.strictObject({
        queueName: z.enum(QUEUE_NAMES),
        queue: queueDepth,
        deadLetterQueue: queueDepth,
        unavailable: z.boolean().describe('True when SQS could not be asked; the depths are null then'),
      }),
    ),
  })
  .register(responseSchemas, { id: 'StatsResponse' });

const usageTotals = {
  calls: count.describe('Provider calls (failed ones included)'),
  promptTokens: count, completionTokens: count, totalTokens: count,
  costUsd: z.string().describe('Decimal USD, 8 places'),
};

export const usageReportSchema = z
  .strictObject({
    from: z.string().describe('First UTC day'),
    to: z.string().describe('Last UTC day (inclusive)'),
    rows: z.array(z.strictObject({
      day: z.string(), jobType: z.string(), provider: z.string(), model: z.string(),
      credentialMode: z.enum(CREDENTIAL_MODES), userId: z.string().optional().describe('Per-user report, or a userId filter'),
      ...usageTotals,
    })),
    total: z.strictObject(usageTotals),
    rollupCoveredUntil: timestamp.nullable().describe('Calls before this come from the daily rollup, later ones from the ledger'),
    userCount: count.optional().describe('`/usage/users` only: users with calls in the range and filters; `rows` lists the `limit` of them with the highest cost, `total` covers them all'),
  })
  .register(responseSchemas, { id: 'UsageReport' });

export const reaperReportSchema = z
  .strictObject({
    generatedAt: timestamp,
    bounds: z.strictObject({
      graceMs: count.describe('Grace after an expired lease (REAPER_LEASE_GRACE_MS)'),
      overdueRetryMs: count.describe('How overdue a released retry may be before it is re-enqueued, once (REAPER_OVERDUE_RETRY_MS)'),
      queuedBoundMs: z.record(z.enum(QUEUE_NAMES), count).describe('How long a job may stay queued, per queue; a re-enqueued retry gets as long before its job fails'),
    }),
    limitPerKind: count.describe('At most this many jobs per kind (and per queue for queued jobs)'),
    items: z.array(z.strictObject({
      kind: z.enum(['expired_lease', 'overdue_retry', 'queued_not_picked_up'])
        .describe('expired_lease: running, lease ended beyond the grace; overdue_retry: released, retry overdue; queued_not_picked_up: queued beyond its queue\'s bound'),
      since: timestamp.describe('When the lease ended, the retry was due, or the job was created'),
      job: adminJobSummarySchema,
    })),
  })
  .register(responseSchemas, { id: 'ReaperReport', description: 'Open jobs the reaper\'s next run would act on (read-only)' });

// The live-job stream (lib/stream/protocol.ts, docs/streaming.md): its schemas are the protocol's own.
responseSchemas.add(streamEntrySchema, {
  id: 'StreamEntry',
  description: 'One entry of a job\'s stream log, at position `seq`: a status change (`status`), more text of an output field (`text`: append `delta`), or one complete item of an array field (`item`). A `running` status entry starts a new attempt: drop the text and items shown so far',
});
export const realtimeConfigSchema = z
  .strictObject({
    available: z.boolean().describe('False: this stage has no realtime push; read `GET /api/ai/jobs/{jobId}/stream` (long-poll) instead'),
    httpEndpoint: z.string().optional().describe('The AppSync Events HTTP endpoint (the client library\'s `httpEndpoint`), when available'),
    realtimeUrl: z.string().optional().describe('Its WebSocket endpoint (`wss://…/event/realtime`), when available'),
    ownerSegment: z.string().regex(/^[0-9a-f]{40}$/).describe('The caller\'s owner segment: the first 40 hex digits of SHA-256 of the token\'s `sub`'),
    channelPrefix: z.string().describe('A job\'s channel is this followed by its id (`/jobs/<ownerSegment>/<jobId>`)'),
  })
  .register(responseSchemas, { id: 'RealtimeConfig', description: 'Where to subscribe to realtime pushes of the caller\'s jobs (docs/streaming.md)' });

responseSchemas.add(streamPageSchema, {
  id: 'StreamPage',
  description: 'The entries after `after`, in `seq` order, at most 200; `hasMore`: ask again at once with `after` = the last `seq`; `terminal`: the job is finished, nothing follows the last entry',
});

export type ReaperReport = z.output<typeof reaperReportSchema>;
export type JobStatusResponse = z.output<typeof jobStatusResponseSchema>;
export type JobListResponse = z.output<typeof jobListResponseSchema>;
export type CredentialResponse = z.output<typeof credentialResponseSchema>;
export type AdminJobSummary = z.output<typeof adminJobSummarySchema>;
export type AdminJobDetail = z.output<typeof adminJobDetailSchema>;
export type StatsResponse = z.output<typeof statsResponseSchema>;
export type QueueStats = StatsResponse['queues'][number];
