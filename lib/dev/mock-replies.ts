/**
 * What the local mock provider writes on the wire, in the shapes of OpenAI's chat-completions API: a JSON
 * `chat.completion`, an error body, or — when the request says `stream: true` — Server-Sent Events:
 *
 *   data: {"object":"chat.completion.chunk", …, "choices":[{"delta":{"role":"assistant","content":""}}]}
 *   data: {… "choices":[{"delta":{"content":"{\"sc"}, "finish_reason":null}]}        (one per token)
 *   data: {… "choices":[{"delta":{}, "finish_reason":"stop"}]}
 *   data: {… "choices":[], "usage":{…}}                                               (with include_usage)
 *   data: [DONE]
 *
 * A streamed answer can also end badly, as real providers' do: cut (the socket closes after N tokens, no
 * terminating chunk) or an error event after N tokens (`data: {"error": {…}}`, then the response ends), which
 * the `openai` SDK raises as an `APIError` without a status.
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MockAnswer, MockChatRequestBody } from './mock-ai-types.ts';

/** The mock's tokens: four characters (code points) each, so usage is about `length / 4` as before. */
export function tokenize(content: string): string[] {
  return content.match(/[\s\S]{1,4}/gu) ?? [];
}

/** Rough token count of a prompt message: four characters a token, at least one for non-empty text. */
export const tokensOf = (text: string) => Math.ceil(text.length / 4);

/** One answer's destination. */
export interface ReplyTarget {
  res: ServerResponse;
  body: MockChatRequestBody;
  /** Aborts when the client went away or the server closes: stop writing. */
  signal: AbortSignal;
  /** Pace of a streamed answer (0 tokens a second: all at once). */
  pace: { tokensPerSecond: number; firstTokenMs: number };
  /** Records that the server itself cut the connection (so it is not counted as a client disconnect). */
  markCut(): void;
  /** Records a complete answer as it goes out. */
  onAnswer(answer: MockAnswer): void;
  /** Told as each token of a streamed answer is written (its 0-based index). */
  onToken?(index: number): void;
}

/** How a streamed answer ends. */
export type StreamEnding =
  | { kind: 'finish'; withUsage: boolean }
  | { kind: 'cut'; afterTokens: number }
  | { kind: 'error'; afterTokens: number; error: { message: string; type: string; code: string } };

/** The answer `content`: a JSON completion, or a stream when the request asked for one. */
export async function sendAnswer(t: ReplyTarget, content: string, opts: { withUsage?: boolean } = {}): Promise<void> {
  const withUsage = opts.withUsage ?? true;
  if (t.body.stream === true) return streamAnswer(t, content, { kind: 'finish', withUsage });
  const usage = withUsage ? usageOf(t.body, tokenize(content).length) : undefined;
  t.onAnswer({ content, ...(usage ? { usage } : {}), streamed: false });
  sendJson(t.res, 200, {
    id: completionId(), object: 'chat.completion', created: nowSeconds(), model: t.body.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    ...(usage ? { usage } : {}),
  });
}

/** Streams `content` token by token at the target's pace, ending as `ending` says. */
export async function streamAnswer(t: ReplyTarget, content: string, ending: StreamEnding): Promise<void> {
  if (t.res.destroyed) return;
  const id = completionId();
  const includeUsage = t.body.stream_options?.include_usage === true;
  const chunk = (choices: unknown[], usage?: unknown) =>
    sse({ id, object: 'chat.completion.chunk', created: nowSeconds(), model: t.body.model, choices, ...(includeUsage ? { usage: usage ?? null } : {}) });
  const delta = (d: object, finish: string | null = null) => chunk([{ index: 0, delta: d, finish_reason: finish, logprobs: null }]);
  t.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  t.res.write(delta({ role: 'assistant', content: '' }));
  if (!(await wait(t.pace.firstTokenMs, t.signal))) return;
  const tokens = tokenize(content);
  const stopAt = ending.kind === 'finish' ? tokens.length : Math.min(ending.afterTokens, tokens.length);
  if (t.pace.tokensPerSecond > 0) {
    const gapMs = 1000 / t.pace.tokensPerSecond;
    for (let i = 0; i < stopAt; i += 1) {
      if (i > 0 && !(await wait(gapMs, t.signal))) return;
      t.res.write(delta({ content: tokens[i] }));
      t.onToken?.(i);
    }
  } else {
    // As fast as possible, yet in pieces as a network delivers them: one huge buffer would cost the client's
    // SSE parser quadratic time (the openai SDK copies the rest of its buffer after every event).
    for (let i = 0; i < stopAt; i += UNPACED_BATCH) {
      if (i > 0 && !(await nextTurn(t.signal))) return;
      const end = Math.min(i + UNPACED_BATCH, stopAt);
      t.res.write(tokens.slice(i, end).map((token) => delta({ content: token })).join(''));
      for (let k = i; k < end; k += 1) t.onToken?.(k);
    }
  }
  if (ending.kind === 'cut') return cutAfterFlush(t);
  if (ending.kind === 'error') return void t.res.end(sse({ error: ending.error }));
  const usage = ending.withUsage && includeUsage ? usageOf(t.body, tokens.length) : undefined;
  t.onAnswer({ content, ...(usage ? { usage } : {}), streamed: true });
  t.res.end(`${delta({}, 'stop')}${usage ? chunk([], usage) : ''}data: [DONE]\n\n`);
}

/** Closes the connection once what was written reached the socket: the client sees a stream break off. */
function cutAfterFlush(t: ReplyTarget): void {
  t.markCut();
  t.res.write('', () => t.res.destroy());
}

/** Drops the connection without an answer (the `cut` scenario of a request that did not ask to stream). */
export function cutConnection(t: ReplyTarget): void {
  t.markCut();
  t.res.destroy();
}

export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { message, type: 'mock_error', code: String(status) } }, headers);
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
}

function usageOf(body: MockChatRequestBody, completionTokens: number) {
  const promptTokens = body.messages.reduce((n, m) => n + tokensOf(m.content), 0);
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

const sse = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
const completionId = () => `chatcmpl-mock-${Date.now().toString(36)}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Tokens an unpaced stream writes at a time, yielding to the event loop in between. */
const UNPACED_BATCH = 16;

/** Resolves on the event loop's next turn: true, or false when `signal` aborted meanwhile. */
async function nextTurn(signal: AbortSignal): Promise<boolean> {
  await new Promise((resolve) => setImmediate(resolve));
  return !signal.aborted;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export async function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  const forever = !Number.isFinite(ms);
  return sleep(forever ? 2_147_483_647 : ms, true, { signal }).catch(() => false);
}
