/**
 * The SQS message body of a job (ADR-003 §3.2, frozen): `{ jobId, jobType, idempotencyKey, createdAt }`.
 * The dispatcher encodes it and the consumer decodes it with the same schema, so a body the consumer would
 * refuse is never sent. The body carries no input, user id or credential: the consumer loads the job row.
 */
import * as z from 'zod';
import { ULID_PATTERN } from '../db/ids.ts';
import { EngineError } from '../errors.ts';
import { toIssueDetails, type IssueDetail } from '../jobs/errors.ts';

/** The frozen job message. Strict: an unknown field is a producer bug, not something to ignore. */
export const jobMessageSchema = z.strictObject({
  /** AiJob primary key (ULID). */
  jobId: z.string().regex(ULID_PATTERN, 'must be a ULID'),
  /** The consumer looks up the job definition by this type. */
  jobType: z.string().min(1).max(64),
  /** The outbox row's `dedupeKey`, also the message's deduplication id (or its hash, see dispatch). */
  idempotencyKey: z.string().min(1).max(191),
  /** The job's creation time, ISO-8601 UTC. */
  createdAt: z.iso.datetime(),
});

/** A parsed job message. */
export type JobMessage = z.output<typeof jobMessageSchema>;

/** A message body is not a valid {@link JobMessage}; `issues` name fields, never values. */
export class InvalidJobMessageError extends EngineError {
  readonly code = 'INVALID_JOB_MESSAGE';
  constructor(readonly issues: readonly IssueDetail[], options?: { cause?: unknown }) {
    super(`Job message is invalid: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`, options);
  }
}

/**
 * Validates and serialises a job message.
 * @throws InvalidJobMessageError when a field breaks the schema.
 */
export function encodeJobMessage(message: JobMessage): string {
  const result = jobMessageSchema.safeParse(message);
  if (!result.success) throw new InvalidJobMessageError(toIssueDetails(result.error), { cause: result.error });
  return JSON.stringify(result.data);
}

/**
 * Parses an SQS body into a job message (the consumer's side of {@link encodeJobMessage}).
 * @throws InvalidJobMessageError when the body is not JSON or breaks the schema.
 */
export function parseJobMessage(body: string): JobMessage {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    throw new InvalidJobMessageError([{ path: '', message: 'body is not JSON' }], { cause: err });
  }
  const result = jobMessageSchema.safeParse(value);
  if (!result.success) throw new InvalidJobMessageError(toIssueDetails(result.error), { cause: result.error });
  return result.data;
}
