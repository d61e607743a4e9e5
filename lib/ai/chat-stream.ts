/**
 * Reading one streamed chat completion: the `chat.completion.chunk`s the `openai` SDK yields from the provider's
 * Server-Sent Events, folded into the whole answer and its usage while each content delta is handed on as it
 * arrives. The deadlines of one call live here too (the provider's total deadline and the first-token deadline).
 *
 * What a well-formed stream looks like (OpenAI's and DeepSeek's chat-completions streaming, with
 * `stream_options: { include_usage: true }`): content chunks `choices[0].delta.content`, one carrying a
 * `finish_reason`, then one chunk with `choices: []` and the call's `usage` (every other chunk has
 * `usage: null`), then `data: [DONE]` (consumed by the SDK). Reasoning models (deepseek-reasoner) first stream
 * `delta.reasoning_content`; that counts as the first token, not as answer text. SSE comments such as DeepSeek's
 * `: keep-alive` under load are dropped by the SDK and never count as a token.
 */
import type OpenAI from 'openai';
import type { TokenUsage } from './types.ts';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

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

/**
 * Reads `stream` to its end. Leaving early (an error of `onDelta`) makes the SDK abort the request, which closes
 * the connection. An abort of the request's signal ends the iteration quietly (the SDK swallows it): the caller
 * must look at its signals after this returns.
 * @throws DeltaSinkError | what the SDK throws (an APIError for an error event in the stream, a TypeError for a cut connection)
 */
export async function readChatStream(stream: AsyncIterable<Chunk>, hooks: StreamHooks): Promise<StreamedAnswer> {
  const parts: string[] = [];
  let usage: Chunk['usage'];
  let finished = false;
  let sawToken = false;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const text = choice.delta?.content ?? '';
    const reasoning = (choice.delta as { reasoning_content?: string | null } | undefined)?.reasoning_content ?? '';
    if (!sawToken && (text || reasoning)) {
      sawToken = true;
      hooks.onFirstToken();
    }
    if (text) {
      parts.push(text);
      try {
        hooks.onDelta?.(text);
      } catch (err) {
        throw new DeltaSinkError(err);
      }
    }
    if (choice.finish_reason) finished = true;
  }
  const promptTokens = usage?.prompt_tokens ?? 0;
  const completionTokens = usage?.completion_tokens ?? 0;
  return {
    content: parts.join(''),
    usage: { promptTokens, completionTokens, totalTokens: usage?.total_tokens ?? promptTokens + completionTokens },
    finished,
  };
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
