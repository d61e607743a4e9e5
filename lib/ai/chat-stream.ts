/**
 * Reading one streamed chat completion: the provider's Server-Sent Events, as the raw response the `openai` SDK
 * hands back (`.asResponse()`), parsed with `eventsource-parser` into `chat.completion.chunk`s and folded into the
 * whole answer and its usage while each content delta is handed on as it arrives. The deadlines of one call live
 * here too (the provider's total deadline and the first-token deadline).
 *
 * Why not the SDK's own stream: it yields each event through three layers of async generators and copies its
 * buffer per event; a streamed answer is one event per token, and that per-event cost was the consumer's largest
 * in bench:peers. Here the events of a network read are parsed and folded synchronously, one await per read.
 * The SDK still builds and sends the request and classifies every refusal (status, headers, body) as before;
 * inside the stream the SDK's rules are kept: `data: [DONE]` ends it (what follows is ignored), every other
 * event's data is JSON, and one carrying `error` is an `APIError` built as the SDK builds it.
 *
 * What a well-formed stream looks like (OpenAI's and DeepSeek's chat-completions streaming, with
 * `stream_options: { include_usage: true }`): content chunks `choices[0].delta.content`, one carrying a
 * `finish_reason`, then one chunk with `choices: []` and the call's `usage` (every other chunk has
 * `usage: null`), then `data: [DONE]`. Reasoning models (deepseek-reasoner) first stream
 * `delta.reasoning_content`; that counts as the first token, not as answer text. SSE comments such as DeepSeek's
 * `: keep-alive` under load are dropped and never count as a token; so is an event without data.
 */
import { APIError } from 'openai';
import type OpenAI from 'openai';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { TokenUsage } from './types.ts';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

/** An event still incomplete after this many characters ends the read (a chat chunk is a few hundred). */
export const MAX_PROVIDER_EVENT_CHARS = 1024 * 1024;

/** What one stream carried. */
export interface StreamedAnswer {
  /** Every content delta, concatenated. */
  content: string;
  /** The last usage the stream reported; zeros when it reported none (as a non-streamed call without usage). */
  usage: TokenUsage;
  /** A chunk carried a `finish_reason`: the model finished its answer (for whatever reason). */
  finished: boolean;
}

/** Hooks of {@link readChatStream}. */
export interface StreamHooks {
  /** The first chunk with answer or reasoning text arrived. */
  onFirstToken(): void;
  /** Answer text, in order. What it throws ends the read wrapped in a {@link DeltaSinkError}. */
  onDelta?: (text: string) => void;
}

/** What the caller's `onDelta` threw: not the provider's failure, so it is never classified as one. */
export class DeltaSinkError {
  constructor(readonly error: unknown) {}
}

/** An event stream the parser gave up on (an event still incomplete past {@link MAX_PROVIDER_EVENT_CHARS}). */
export class EventStreamError extends Error {}

/**
 * Reads `response`'s event stream to its end (what follows `data: [DONE]` is read and ignored, so the connection
 * can be kept for the next call). Leaving early (an error event, bad JSON, an
 * error of `onDelta`) cancels the body, which closes the connection. An abort of the request's signal rejects the
 * body's read: the caller tells its own signals apart.
 * @throws DeltaSinkError | APIError (an error event in the stream) | SyntaxError (an event that is not JSON) |
 *   EventStreamError | what the body's read throws (a TypeError for a cut connection, the abort's reason)
 */
export async function readChatStream(response: Response, hooks: StreamHooks): Promise<StreamedAnswer> {
  const fold = new ChunkFold(hooks);
  let done = false;
  let failure: unknown;
  const parser = createParser({
    maxBufferSize: MAX_PROVIDER_EVENT_CHARS,
    onEvent(event: EventSourceMessage) {
      if (done || failure !== undefined) return;
      if (event.data.startsWith('[DONE]')) {
        done = true;
        return;
      }
      try {
        const data = JSON.parse(event.data) as Chunk & { error?: unknown };
        if (data?.error) throw new APIError(undefined, data.error as object, undefined, response.headers);
        fold.add(data);
      } catch (err) {
        failure = err;
      }
    },
    onError(err) {
      if (err.type === 'max-buffer-size-exceeded') failure ??= new EventStreamError(`an event of the stream passed ${MAX_PROVIDER_EVENT_CHARS} characters`);
    },
  });
  if (!response.body) return fold.answer();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let ended = false;
  try {
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) {
        ended = true;
        parser.feed(decoder.decode());
        break;
      }
      parser.feed(decoder.decode(value, { stream: true }));
      if (failure !== undefined) throw failure;
    }
    if (failure !== undefined) throw failure;
    return fold.answer();
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** The chunks of one stream, folded as they come. */
class ChunkFold {
  private readonly parts: string[] = [];
  private usage: Chunk['usage'];
  private finished = false;
  private sawToken = false;

  constructor(private readonly hooks: StreamHooks) {}

  add(chunk: Chunk): void {
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const text = choice.delta?.content ?? '';
    const reasoning = (choice.delta as { reasoning_content?: string | null } | undefined)?.reasoning_content ?? '';
    if (!this.sawToken && (text || reasoning)) {
      this.sawToken = true;
      this.hooks.onFirstToken();
    }
    if (text) {
      this.parts.push(text);
      try {
        this.hooks.onDelta?.(text);
      } catch (err) {
        throw new DeltaSinkError(err);
      }
    }
    if (choice.finish_reason) this.finished = true;
  }

  answer(): StreamedAnswer {
    const promptTokens = this.usage?.prompt_tokens ?? 0;
    const completionTokens = this.usage?.completion_tokens ?? 0;
    return {
      content: this.parts.join(''),
      usage: { promptTokens, completionTokens, totalTokens: this.usage?.total_tokens ?? promptTokens + completionTokens },
      finished: this.finished,
    };
  }
}

/**
 * The deadlines of one provider call, as one signal: the total deadline (headers and body together) and, when
 * set, the first-token deadline, which {@link tokenArrived} stops. Which one passed is kept for the error.
 */
export class CallDeadlines {
  readonly signal: AbortSignal;
  readonly #total: AbortSignal;
  readonly #firstToken = new AbortController();
  #timer: NodeJS.Timeout | undefined;

  constructor(readonly totalMs: number, readonly firstTokenMs: number | undefined) {
    this.#total = AbortSignal.timeout(totalMs);
    if (firstTokenMs !== undefined) {
      this.#timer = setTimeout(() => this.#firstToken.abort(new DOMException(`no token within ${firstTokenMs} ms`, 'TimeoutError')), firstTokenMs);
    }
    this.signal = AbortSignal.any([this.#total, this.#firstToken.signal]);
  }

  /** The first token arrived: only the total deadline is left. */
  tokenArrived(): void {
    clearTimeout(this.#timer);
  }

  get firstTokenPassed(): boolean {
    return this.#firstToken.signal.aborted;
  }

  get totalPassed(): boolean {
    return this.#total.aborted;
  }

  /** Stops the first-token timer (call when the call ends, however it ends). */
  clear(): void {
    clearTimeout(this.#timer);
  }
}
