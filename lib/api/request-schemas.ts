/**
 * What a request may carry, as zod schemas: path parameters, query strings, headers and the bodies that are
 * not a job type's input (those are the definitions' own `inputSchema`). Every object is strict: an unknown
 * field or query parameter is a 400, not silently ignored. The same schemas generate the OpenAPI document.
 */
import * as z from 'zod';
import { ULID_PATTERN } from '../db/ids.ts';
import { JOB_TYPE_PATTERN, QUEUE_NAMES } from '../jobs/definition.ts';
import { JOB_STATES } from '../jobs/states.ts';
import { DEFAULT_REPORT_USERS, MAX_REPORT_USERS } from '../rollups/usage-report.ts';
import { decodeCursor } from './pagination.ts';
import { MAX_STREAM_WAIT_SECONDS } from '../stream/long-poll.ts';
import type { AdminAction, StreamAction, UserAction } from './routes.ts';
import { budgetsQuerySchema, modelQuerySchema, spendCapQuerySchema } from './budget-schemas.ts';

/** Largest request body accepted, in bytes (after base64 decoding). */
export const MAX_BODY_BYTES = 64 * 1024;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const jobIdSchema = z.string().regex(ULID_PATTERN, 'must be a job id (26-character ULID)');

export const jobIdPathSchema = z.strictObject({ jobId: jobIdSchema });
/** Path parameters of routes without any. */
export const noPathParamsSchema = z.strictObject({});

/**
 * `Idempotency-Key`: 1–100 characters of `A–Z a–z 0–9 _ - . = + /` (UUIDs, ULIDs, base64). The alphabet has
 * no `:`, which keeps user keys apart from the keys the admin retry uses (`retry:<jobId>`).
 */
export const idempotencyKeySchema = z
  .string()
  .regex(/^[A-Za-z0-9_\-.=+/]{1,100}$/, 'must be 1-100 characters of A-Z a-z 0-9 _ - . = + /');

const limitSchema = z.coerce.number<string>().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE)
  .describe(`Page size, 1-${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`);

const cursorSchema = z
  .string()
  .max(64)
  .transform((value, ctx) => {
    const after = decodeCursor(value);
    if (after === null) {
      ctx.addIssue({ code: 'custom', message: 'is not a cursor returned by this API' });
      return z.NEVER;
    }
    return after;
  })
  .describe('The `nextCursor` of the previous page');

const statusFilter = z.enum(JOB_STATES).describe('Only jobs in this lifecycle status');
const jobTypeFilter = z.string().regex(JOB_TYPE_PATTERN, 'must be a job type').describe('Only jobs of this type');

/** `GET /api/ai/jobs`: the caller's jobs. */
export const userJobListQuerySchema = z.strictObject({
  status: statusFilter.optional(),
  jobType: jobTypeFilter.optional(),
  limit: limitSchema,
  cursor: cursorSchema.optional(),
});

/** `GET /admin-api/ai/jobs`: everyone's jobs; `createdFrom` inclusive, `createdTo` exclusive. */
export const adminJobListQuerySchema = z
  .strictObject({
    status: statusFilter.optional(),
    jobType: jobTypeFilter.optional(),
    queueName: z.enum(QUEUE_NAMES).optional().describe('Only jobs routed to this queue'),
    userId: z.string().min(1).max(64).optional().describe('Only jobs of this user'),
    errorCode: z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'must be an error code (A-Z, 0-9, _)').optional()
      .describe('Only jobs that ended with this error code (e.g. DEAD_LETTERED, LEASE_EXPIRED)'),
    createdFrom: z.iso.datetime({ offset: true }).optional().describe('Created at or after (ISO 8601)'),
    createdTo: z.iso.datetime({ offset: true }).optional().describe('Created before (ISO 8601)'),
    limit: limitSchema,
    cursor: cursorSchema.optional(),
  })
  .refine((q) => !q.createdFrom || !q.createdTo || Date.parse(q.createdFrom) < Date.parse(q.createdTo), {
    message: 'must be after createdFrom',
    path: ['createdTo'],
  });

const utcDay = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a UTC day (YYYY-MM-DD)')
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'is not a calendar day');

const usageQueryFields = {
  from: utcDay.optional().describe('First UTC day, YYYY-MM-DD (default: 6 days before `to`)'),
  to: utcDay.optional().describe('Last UTC day, inclusive (default: today)'),
  jobType: jobTypeFilter.optional(),
  model: z.string().min(1).max(128).optional().describe('Only calls to this provider model'),
  userId: z.string().min(1).max(64).optional().describe('Only this user\'s calls'),
};

/** A usage query's day range: `from` not after `to`, at most 92 days. */
function usageRange<T extends z.ZodType<{ from?: string | undefined; to?: string | undefined }>>(schema: T) {
  return schema
    .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'must not be after `to`', path: ['from'] })
    .refine((q) => !q.from || !q.to || Date.parse(q.to) - Date.parse(q.from) < 92 * 86_400_000, {
      message: 'the range covers at most 92 days', path: ['from'],
    });
}

/** `GET /admin-api/ai/usage`: a day range (both inclusive, at most 92 days) and filters. */
export const usageQuerySchema = usageRange(z.strictObject(usageQueryFields));

/** `GET /admin-api/ai/usage/users`: the same, and how many users to list (those with the highest cost). */
export const userUsageQuerySchema = usageRange(z.strictObject({
  ...usageQueryFields,
  limit: z.coerce.number<string>().int().min(1).max(MAX_REPORT_USERS).default(DEFAULT_REPORT_USERS)
    .describe(`Users listed: those with the highest cost in the range (default ${DEFAULT_REPORT_USERS}, at most ${MAX_REPORT_USERS}); \`userCount\` says how many had any`),
}));

/** The highest `seq` a job's stream log can reach (its column is a signed 32-bit INT). */
export const MAX_STREAM_SEQ = 2_147_483_647;

/** `GET /api/ai/jobs/{jobId}/stream` (and the admin route): where to read from, and how long to wait for something. */
export const streamQuerySchema = z.strictObject({
  after: z.coerce.number<string>().int().min(0).max(MAX_STREAM_SEQ).default(0)
    .describe('Return the entries after this `seq`: the last one the client holds (default 0, the whole log)'),
  wait: z.coerce.number<string>().int().min(0).max(MAX_STREAM_WAIT_SECONDS).default(0)
    .describe(`When nothing follows \`after\` yet, hold the request up to this many seconds (0-${MAX_STREAM_WAIT_SECONDS}, default 0: answer at once) until something does; the server holds at most 18 s (docs/streaming.md)`),
});

/** No query parameters at all. */
export const emptyQuerySchema = z.strictObject({});

/** `PUT /api/ai/credentials/deepseek`. The key's shape is checked by lib/credentials/key-shape.ts. */
export const putCredentialBodySchema = z.strictObject({
  apiKey: z.string().min(1).max(512).describe('The provider API key; stored encrypted, never returned'),
});

export type UserJobListQuery = z.output<typeof userJobListQuerySchema>;
export type AdminJobListQuery = z.output<typeof adminJobListQuerySchema>;
export type UsageQuery = z.output<typeof usageQuerySchema>;
export type UserUsageQuery = z.output<typeof userUsageQuerySchema>;
export type StreamQuery = z.output<typeof streamQuerySchema>;

/** Query schema of each action that takes parameters; every other route accepts none. */
export const QUERY_SCHEMAS: Partial<Record<UserAction | AdminAction | StreamAction, z.ZodType>> = {
  listJobs: userJobListQuerySchema,
  streamJob: streamQuerySchema,
  adminStreamJob: streamQuerySchema,
  adminListJobs: adminJobListQuerySchema,
  adminUsage: usageQuerySchema,
  adminUsageByUser: userUsageQuerySchema,
  adminBudgets: budgetsQuerySchema,
  adminResetModelLimits: modelQuerySchema,
  adminEndCooldown: modelQuerySchema,
  adminResetSpendCap: spendCapQuerySchema,
};
