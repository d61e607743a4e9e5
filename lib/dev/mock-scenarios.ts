/**
 * The local mock provider's scenarios: what it answers once a request got through routing, auth and the
 * server-wide latency and failure rate (./mock-ai-server.ts has the table of every scenario and marker). A
 * scenario that answers validly streams when the request asked for a stream (./mock-replies.ts).
 */
import { cutConnection, sendAnswer, sendError, streamAnswer, wait, type ReplyTarget } from './mock-replies.ts';
import { lastUserText, stripMarkers } from './mock-markers.ts';
import type { MockAiServerOptions, MockRespond } from './mock-ai-types.ts';

/** `{"answer": "...", "echo": "<first 40 chars of the last user message, markers removed>"}`. */
export const defaultMockRespond: MockRespond = ({ messages }) => {
  const prompt = stripMarkers(lastUserText(messages));
  return { answer: `Mock answer (${prompt.length} characters of prompt)`, echo: prompt.slice(0, 40) };
};

/** What a scenario gets: where to answer, its argument (`slow:<arg>`), the server's options and memory. */
export interface ScenarioContext extends ReplyTarget {
  arg: string | undefined;
  options: MockAiServerOptions;
  /** Keys the `fail_once` scenario has failed for already (per server). */
  failedOnce: Set<string>;
}

export type Scenario = (ctx: ScenarioContext) => void | Promise<void>;

/** The error event a provider sends when it hits a rate limit mid-stream (OpenAI's `code`). */
const RATE_LIMIT_EVENT = { message: 'Rate limit reached mid-stream (mock)', type: 'rate_limit_error', code: 'rate_limit_exceeded' };

/** Scenario name → behaviour. Add a scenario here and in the table of ./mock-ai-server.ts. */
export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  ok: (ctx) => sendAnswer(ctx, contentOf(ctx)),
  no_usage: (ctx) => sendAnswer(ctx, contentOf(ctx), { withUsage: false }),
  slow: async (ctx) => {
    if (await wait(Number(ctx.arg ?? 1000) || 0, ctx.signal)) await sendAnswer(ctx, contentOf(ctx));
  },
  hang: async (ctx) => {
    await wait(Number.POSITIVE_INFINITY, ctx.signal);
  },
  rate_limit: (ctx) => sendError(ctx.res, 429, 'rate limit reached (mock)', { 'retry-after': String(Number(ctx.arg ?? 1) || 1) }),
  server_error: (ctx) => sendError(ctx.res, 500, 'internal error (mock)'),
  unauthorized: (ctx) => sendError(ctx.res, 401, 'invalid API key (mock)'),
  invalid_json: (ctx) => sendAnswer(ctx, '{"answer": "this JSON never ends'),
  schema_violation: (ctx) => sendAnswer(ctx, JSON.stringify({ unexpected: 'field', answer: 42 })),
  fail_once: async (ctx) => {
    const key = ctx.arg ?? '';
    if (ctx.failedOnce.has(key)) return sendAnswer(ctx, contentOf(ctx));
    ctx.failedOnce.add(key);
    sendError(ctx.res, 500, `first call for "${key}" fails (mock)`);
  },
  cut: (ctx) => {
    if (ctx.body.stream !== true) return cutConnection(ctx);
    return streamAnswer(ctx, contentOf(ctx), { kind: 'cut', afterTokens: countArg(ctx.arg) });
  },
  rate_limit_mid: (ctx) => {
    if (ctx.body.stream !== true) return sendError(ctx.res, 429, 'rate limit reached (mock)', { 'retry-after': '1' });
    return streamAnswer(ctx, contentOf(ctx), { kind: 'error', afterTokens: countArg(ctx.arg), error: RATE_LIMIT_EVENT });
  },
};

/** A token count argument (`cut:<n>`), 10 when absent or malformed. */
function countArg(arg: string | undefined): number {
  return arg !== undefined && /^\d+$/.test(arg) ? Number(arg) : 10;
}

/** The valid answer's content for this request, from the server's `respond`. */
function contentOf({ body, options }: ScenarioContext): string {
  const respond = options.respond ?? defaultMockRespond;
  const jsonMode = body.response_format?.type === 'json_object';
  const content = respond({ model: body.model, messages: body.messages, jsonMode });
  return typeof content === 'string' ? content : JSON.stringify(content);
}
