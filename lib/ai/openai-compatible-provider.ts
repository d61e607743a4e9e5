/**
 * An {@link AiProvider} for any endpoint speaking the OpenAI chat-completions API (OpenAI, DeepSeek, the local
 * mock), built on the `openai` SDK with its own retries off: retrying belongs to the gateway (fallback) and
 * the engine (attempts), and a hidden SDK retry would spend the job's deadline twice.
 */
import OpenAI, { APIError } from 'openai';
import {
  CredentialInvalidError,
  JobFailure,
  ProviderFirstTokenTimeoutError,
  ProviderStreamCutError,
  ProviderTimeoutError,
} from '../jobs/failures.ts';
import { REDACTED } from '../jobs/redaction.ts';
import { CallDeadlines, DeltaSinkError, readChatStream } from './chat-stream.ts';
import { toProviderFailure } from './provider-errors.ts';
import type { AiProvider, ChatRequest, ProviderCallOptions, ProviderReply } from './types.ts';

/** Default deadline of one provider request (headers and the whole stream). */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 60_000;

/** How to reach one OpenAI-compatible endpoint. */
export interface OpenAiCompatibleProviderOptions {
  /** The route's provider name (e.g. `deepseek`); it appears in routes, the usage ledger and error messages. */
  name: string;
  /** API root the SDK appends `/chat/completions` to, e.g. `https://api.deepseek.com`. */
  baseURL: string;
  /** Deadline of one request, headers and the whole stream together; default {@link DEFAULT_PROVIDER_TIMEOUT_MS}. */
  timeoutMs?: number;
}

type CompletionBody = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;

/**
 * One streamed chat completion per {@link complete} call (`stream: true` with `stream_options.include_usage`, so
 * the usage of the whole call arrives in the stream's last chunk), in JSON mode when the request asks for it.
 * Each content delta goes to `onDelta` as it arrives; the reply is the whole text and the reported usage.
 *
 * Invariants: never retries; throws only JobFailure subclasses, except when the caller's `signal` aborts, in
 * which case it rethrows the signal's `reason` at once, also mid-stream (the engine tells its timeout from a
 * cancel by its own controller), and except what `onDelta` throws, rethrown unchanged. Its own deadlines:
 * the total one ({@link timeoutMs}) surfaces as ProviderTimeoutError, the first-token one as
 * ProviderFirstTokenTimeoutError. A stream that breaks off after it opened (the connection cut, or closed
 * without a finish reason) is ProviderStreamCutError; an error event inside the stream is classified by
 * ./provider-errors.ts. The key used is scrubbed from every error kept as a cause. Nothing is logged (the SDK's
 * logger is off), so prompts and keys stay out of the logs.
 */
export class OpenAiCompatibleProvider implements AiProvider {
  readonly name: string;
  readonly baseURL: string;
  readonly timeoutMs: number;

  constructor(options: OpenAiCompatibleProviderOptions) {
    this.name = options.name;
    this.baseURL = options.baseURL;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
  }

  async complete(request: ChatRequest & { model: string }, opts: ProviderCallOptions): Promise<ProviderReply> {
    opts.signal.throwIfAborted();
    if (!opts.apiKey) throw new CredentialInvalidError(`No API key for ${this.name}`);
    // The SDK's own timeout stops at the response headers; these deadlines also cover reading the stream.
    const deadlines = new CallDeadlines(this.timeoutMs, opts.firstTokenTimeoutMs);
    const signal = AbortSignal.any([opts.signal, deadlines.signal]);
    let opened = false;
    try {
      // The raw response: its event stream is read by ./chat-stream.ts, not by the SDK's Stream (it says why).
      const response = await this.clientFor(opts.apiKey).chat.completions.create(toCompletionBody(request), { signal }).asResponse();
      opened = true;
      const answer = await readChatStream(response, { onFirstToken: () => deadlines.tokenArrived(), onDelta: opts.onDelta });
      // A deadline or the caller's abort that came as the stream ended still wins over the answer.
      if (signal.aborted) throw signal.reason;
      if (!answer.finished) throw new ProviderStreamCutError(`${this.name} closed the stream before the answer was complete`);
      return { content: answer.content, usage: answer.usage };
    } catch (err) {
      throw this.failureOf(err, opts, deadlines, opened);
    } finally {
      deadlines.clear();
    }
  }

  /** What {@link complete} throws for `err` (see the class comment for the order). */
  private failureOf(err: unknown, opts: ProviderCallOptions, deadlines: CallDeadlines, opened: boolean): unknown {
    if (opts.signal.aborted) return opts.signal.reason;
    if (err instanceof DeltaSinkError) return err.error;
    const cause = { cause: scrubSecret(err, opts.apiKey) };
    if (deadlines.firstTokenPassed) {
      return new ProviderFirstTokenTimeoutError(`${this.name} sent no token within ${deadlines.firstTokenMs} ms`, cause);
    }
    if (deadlines.totalPassed) return new ProviderTimeoutError(`${this.name} did not answer within ${this.timeoutMs} ms`, cause);
    if (err instanceof JobFailure) return err;
    // After the stream opened, anything but an error event in it means the stream broke off (a cut connection is
    // undici's TypeError "terminated"; an event that is not JSON, a SyntaxError; an oversized event).
    if (opened && !(err instanceof APIError)) return new ProviderStreamCutError(`${this.name}'s stream broke off mid-answer`, cause);
    return toProviderFailure(cause.cause, this.name, this.timeoutMs);
  }

  /**
   * The SDK client for one API key, made once and kept (up to {@link MAX_CLIENTS} keys, least recently used
   * dropped): building one costs more than a mock's whole answer. The key stays in this process's memory,
   * where the caller already holds it.
   */
  private clientFor(apiKey: string): OpenAI {
    let client = this.clients.get(apiKey);
    if (client) {
      this.clients.delete(apiKey);
    } else {
      client = new OpenAI({
        apiKey,
        baseURL: this.baseURL,
        maxRetries: 0,
        timeout: this.timeoutMs,
        // Never pick up OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment and send them to another vendor.
        organization: null,
        project: null,
        logLevel: 'off',
      });
      if (this.clients.size >= MAX_CLIENTS) this.clients.delete(this.clients.keys().next().value!);
    }
    this.clients.set(apiKey, client);
    return client;
  }

  private readonly clients = new Map<string, OpenAI>();
}

/** SDK clients kept per provider: one per API key in use (the platform key, and users' own keys). */
const MAX_CLIENTS = 64;

function toCompletionBody(request: ChatRequest & { model: string }): CompletionBody {
  return {
    model: request.model,
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    stream: true,
    stream_options: { include_usage: true },
    ...(request.jsonMode ? { response_format: { type: 'json_object' as const } } : {}),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
  };
}

/** Shorter keys are not searched for: replacing every occurrence of a short string would mangle the text. */
const MIN_SCRUBBED_SECRET = 8;

/**
 * `err` with every occurrence of `secret` in the message and stack of it and its causes (3 deep) replaced by
 * `[REDACTED]`. Some vendors echo a refused key in their error text, and that text becomes the job's
 * admin-visible detail (lib/engine/settle.ts); the pattern redaction there only knows key shapes, this one
 * knows the key.
 */
export function scrubSecret(err: unknown, secret: string): unknown {
  if (secret.length < MIN_SCRUBBED_SECRET) return err;
  let current: unknown = err;
  for (let depth = 0; current instanceof Error && depth < 4; depth += 1) {
    for (const field of ['message', 'stack'] as const) {
      const text = current[field];
      // An own data property, even where the class has a getter only (DOMException's message).
      if (text?.includes(secret)) Object.defineProperty(current, field, { value: text.replaceAll(secret, REDACTED), writable: true, configurable: true });
    }
    current = current.cause;
  }
  return err;
}
