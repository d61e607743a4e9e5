/**
 * RESOLVE and EXECUTE (ADR-003 §5.1): snapshot → input, prompt by key and version, credentials, optional
 * content safety, one gateway call in JSON mode under the attempt's abort signal, then parse and validate the
 * output with the definition's schema, redact it when the definition sets `security.outputRedaction` (the
 * snapshot rules of ../jobs/redaction.ts: secret-named fields and secret-shaped text), and hash it. Every provider call lands in the usage ledger.
 *
 * While the answer streams, a job type that declares `streaming` previews it: each provider call's text goes
 * through a PreviewReader (../stream/preview-reader.ts, redacting as the final output is redacted) into the
 * attempt's stream segment. The previews are a view only: the validated output below stays the only result.
 */
import type { AiJob, AiJobSnapshot } from '../db/client.ts';
import { EngineError } from '../errors.ts';
import type { ChatMessage, CredentialSet, GenerateResult } from '../ai/types.ts';
import { firstTokenTimeoutOf, streamingPlanOf, type JobDefinition } from '../jobs/definition.ts';
import { hashCanonical } from '../jobs/canonical-json.ts';
import { toIssueDetails } from '../jobs/errors.ts';
import { redactSnapshot } from '../jobs/redaction.ts';
import { InternalJobError, SchemaValidationError } from '../jobs/failures.ts';
import { findSnapshot } from '../jobs/snapshot-repository.ts';
import { NO_ATTEMPT_STREAM, type AttemptStream } from '../stream/attempt-stream.ts';
import { PreviewReader } from '../stream/preview-reader.ts';
import type { EngineDeps } from './engine-deps.ts';
import { recordProviderCall, usageStatement, UsageRow } from './usage-ledger.ts';

export interface AttemptResult {
  output: unknown;
  outputHash: string;
  generated: GenerateResult;
  /** The input the attempt ran on (parsed from the snapshot); projectors reuse it instead of reading it again. */
  input: unknown;
  /**
   * The ledger row of the call that answered, not written yet: the projection carries it in its transaction,
   * and every path that does not commit one must {@link UsageRow.write} it (./usage-ledger.ts).
   */
  usage: UsageRow;
}

/** Per-attempt context of {@link runAttempt}. */
export interface AttemptOptions {
  /** The job's snapshot when the caller already read it (the lock returns it); undefined reads it. */
  snapshot?: AiJobSnapshot | null;
  /** The attempt's stream segment, fed the previews; default NO_ATTEMPT_STREAM. The caller closes it. */
  stream?: AttemptStream;
}

export async function runAttempt(
  job: AiJob, def: JobDefinition, signal: AbortSignal, deps: EngineDeps, options: AttemptOptions = {},
): Promise<AttemptResult> {
  const { snapshot, stream = NO_ATTEMPT_STREAM } = options;
  const input = parseInput(job, def, snapshot === undefined ? await findSnapshot(deps.db, job.id) : snapshot);
  const prompt = deps.prompts.get(job.promptKey, job.promptVersion);
  const credentials = await deps.resolveCredentials(job);
  const userMessage = prompt.render(input);
  if (def.security.contentSafetyCheck) await deps.safety.check(userMessage, 'input');
  const messages: ChatMessage[] = [{ role: 'system', content: prompt.system }, { role: 'user', content: userMessage }];
  const feedback = schemaFeedback(job);
  if (feedback) messages.push({ role: 'user', content: feedback });

  const { generated, usage } = await generateAnswer(job, def, { messages, credentials, signal, stream }, deps);
  try {
    await deps.checkpoints?.afterProviderAnswer?.(job);
    const validated = validateOutput(def, generated.content);
    if (def.security.contentSafetyCheck) await deps.safety.check(generated.content, 'output');
    // Redacted before anything stores or shows it: the projector, its artifacts and the hash see this copy.
    const output = def.security.outputRedaction ? redactSnapshot(validated).content : validated;
    await deps.checkpoints?.afterValidation?.(job);
    return { output, outputHash: hashCanonical(output), generated, input, usage };
  } catch (err) {
    await writeUsageBeforeFailing(usage, job, deps);
    throw err;
  }
}

/**
 * The gateway call of an attempt: streamed previews to `stream` when the type declares `streaming`, every failed
 * or aborted provider call billed at once, the answering call's ledger row handed back unwritten.
 */
async function generateAnswer(
  job: AiJob, def: JobDefinition,
  call: { messages: ChatMessage[]; credentials: CredentialSet; signal: AbortSignal; stream: AttemptStream },
  deps: EngineDeps,
): Promise<{ generated: GenerateResult; usage: UsageRow }> {
  const { messages, credentials, signal, stream } = call;
  let answered: UsageRow | undefined;
  // No segment to feed (no stream log, or a type that streams nothing): no reader, and nothing is ever shown,
  // so the gateway may fall back from any call.
  const plan = stream === NO_ATTEMPT_STREAM ? undefined : streamingPlanOf(def);
  const generated = await deps.generate(
    { messages, jsonMode: true },
    {
      tier: job.modelTier, credentials, signal, admission: job, firstTokenTimeoutMs: firstTokenTimeoutOf(def),
      // A reader per provider call: a fallback route's answer is parsed from its own start.
      ...(plan ? { openSink: () => new PreviewReader({ plan, redact: def.security.outputRedaction, emit: (e) => stream.preview(e) }) } : {}),
      onCall: (record) => {
        // The call that answered is billed with the projection (or by whoever gives up on it, in runAttempt).
        if (!record.errorCode && !record.aborted) {
          answered = new UsageRow(usageStatement(job, record, deps.price));
          return;
        }
        // An aborted call is billed under the reason the attempt was aborted for (TIMEOUT, CANCELLED, …).
        return recordProviderCall(job, record.aborted ? { ...record, errorCode: abortCode(signal) } : record, deps.price);
      },
    },
  );
  if (!answered) throw new InternalJobError(`job ${job.id}: the provider answered but no call was reported`);
  return { generated, usage: answered };
}

/**
 * Writes the answered call's ledger row on a path that will not project. A failure to write it (the database
 * is down, say) is logged, never raised: the attempt's own error is what the caller must settle.
 */
export async function writeUsageBeforeFailing(usage: UsageRow, job: Pick<AiJob, 'id'>, deps: Pick<EngineDeps, 'logger'>): Promise<void> {
  await usage.write().catch((err: unknown) => {
    deps.logger.error('usage row of an answered call could not be written', { jobId: job.id, error: err instanceof Error ? err.name : typeof err });
  });
}

function abortCode(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof EngineError ? reason.code : 'ABORTED';
}

/** The job runs on its (redacted) snapshot, parsed again with the definition's input schema. */
function parseInput(job: AiJob, def: JobDefinition, snapshot: AiJobSnapshot | null): unknown {
  if (!snapshot) throw new InternalJobError(`job ${job.id} has no snapshot`);
  const parsed = def.inputSchema.safeParse(snapshot.content);
  if (!parsed.success) throw new InternalJobError(`snapshot of job ${job.id} no longer matches the input schema`);
  return parsed.data;
}

/**
 * Parses the model's answer as JSON and validates it with the output schema.
 * @throws SchemaValidationError naming what was wrong (fed back to the model on the retry)
 */
export function validateOutput(def: Pick<JobDefinition, 'outputSchema'>, content: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    throw new SchemaValidationError('output is not valid JSON', ['the answer must be one JSON object']);
  }
  const result = def.outputSchema.safeParse(value);
  if (!result.success) {
    const problems = toIssueDetails(result.error).map((i) => `${i.path || '(root)'}: ${i.message}`);
    throw new SchemaValidationError(`output failed the schema: ${problems.join('; ')}`, problems);
  }
  return result.data;
}

/** After a SCHEMA_VALIDATION failure, the next attempt tells the model what was wrong with its last answer. */
function schemaFeedback(job: AiJob): string | undefined {
  if (job.errorCode !== 'SCHEMA_VALIDATION' || !job.internalErrorMessage) return undefined;
  return `Your previous answer was rejected (${job.internalErrorMessage.slice(0, 1000)}). Answer again with one JSON object that follows the required format exactly.`;
}
