/**
 * The live-job stream's contract: what the durable stream log holds per job, what
 * `GET /api/ai/jobs/{jobId}/stream` returns, what a realtime push carries and what the client library reads.
 * One name for the position everywhere: `seq`.
 *
 * Invariants:
 * - `seq` is per job, starts at 1 and grows by 1 with every entry, across attempts. A reader holds the last
 *   `seq` it saw and asks for what follows; a push is only a hint to do so, so a missed or repeated push
 *   loses nothing and shows nothing twice (de-duplicate by `seq`, backfill on a gap).
 * - `attempt` is the attempt that wrote the entry (status entries: the attempt they belong to). Text and items
 *   of an attempt older than the newest one a reader has seen are stale: the reader discards them.
 * - Entries are never edited or reordered once committed; `seq` order is commit order.
 * - The validated, projected result stays the only result: streamed text and items are a preview.
 */
import * as z from 'zod';

/** Job states a status entry reports (mirrors lib/jobs/states.ts JOB_STATES). */
export const STREAM_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

const base = {
  seq: z.number().int().min(1),
  attempt: z.number().int().min(0),
  /** When the entry was committed (ISO 8601, UTC). */
  at: z.iso.datetime(),
};

/** A transition the job's owner may see (queued → running, retry scheduled, succeeded, failed, cancelled). */
export const statusEntrySchema = z.strictObject({
  ...base,
  type: z.literal('status'),
  status: z.enum(STREAM_STATUSES),
  /** status `queued` after a failed attempt: when the next attempt is due. */
  retryAt: z.iso.datetime().optional(),
  /** status `succeeded`: the API path of the result. */
  resultUrl: z.string().optional(),
  /** status `failed` (and `queued` before a retry): the public error, never internal detail. */
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  /**
   * The job waits, no attempt spent, for shared provider capacity or a spending cap's reset (lib/capacity/,
   * docs/budgets.md) until `until`; JobStatusResponse is frozen, so this is where the owner sees why.
   */
  waitingFor: z.strictObject({ reason: z.enum(['provider_capacity', 'spend_cap']), until: z.iso.datetime() }).optional(),
});

/** More text of a streamed text field of the output (e.g. Feynman `feedback`): append `delta` to `field`. */
export const textEntrySchema = z.strictObject({ ...base, type: z.literal('text'), field: z.string(), delta: z.string() });

/** One complete element of a streamed array field of the output (e.g. a quiz question), at `index`. */
export const itemEntrySchema = z.strictObject({
  ...base,
  type: z.literal('item'),
  field: z.string(),
  index: z.number().int().min(0),
  item: z.unknown(),
});

export const streamEntrySchema = z.discriminatedUnion('type', [statusEntrySchema, textEntrySchema, itemEntrySchema]);
export type StreamEntry = z.infer<typeof streamEntrySchema>;
export type StatusEntry = z.infer<typeof statusEntrySchema>;

/** `GET /api/ai/jobs/{jobId}/stream?after={seq}&wait={seconds}`: the entries after `after`, in `seq` order. */
export const streamPageSchema = z.strictObject({
  jobId: z.string(),
  entries: z.array(streamEntrySchema),
  /** The highest `seq` committed for the job when the page was read (0: none yet). */
  lastSeq: z.number().int().min(0),
  /** More entries follow the page: ask again with `after` = the page's last `seq` at once. */
  hasMore: z.boolean(),
  /** The job is finished (succeeded, failed or cancelled): after the last entry nothing more will come. */
  terminal: z.boolean(),
});
export type StreamPage = z.infer<typeof streamPageSchema>;

/** What one realtime push carries: the entries one append committed, for the job's owner (and admins). */
export interface StreamPush {
  userId: string;
  jobId: string;
  entries: StreamEntry[];
}

/**
 * Publishes pushes to the realtime service after the durable append. A hint only: it never throws, never
 * makes the caller wait on the network (publish), and whatever it fails to deliver the reader backfills.
 */
export interface StreamPublisher {
  publish(push: StreamPush): void;
  /**
   * Waits at most `timeoutMs` for publishes still in flight (before a Lambda handler returns): inside a publish
   * scope (./publish-scope.ts), the scope's own; outside one, all. Never throws.
   */
  flush(timeoutMs: number): Promise<void>;
}

/** The publisher when no realtime service is configured. */
export const NO_STREAM_PUBLISHER: StreamPublisher = { publish: () => undefined, flush: async () => undefined };

/**
 * What an attempt previews of its output as the model writes it, before it is a log entry (no `seq`, `attempt`
 * or `at` yet): the job type's streaming reader makes these from the provider's deltas, already redacted.
 */
export type PreviewEvent =
  | { type: 'text'; field: string; delta: string }
  | { type: 'item'; field: string; index: number; item: unknown };
