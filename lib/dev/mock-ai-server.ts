/**
 * A local HTTP server speaking the OpenAI chat-completions API (`POST /v1/chat/completions`), for tests and
 * for the local runtime when no provider key is configured. node:http only.
 *
 * Behaviour per request comes from a marker in the last user message, else from the server's default scenario:
 *
 * | marker                          | answer                                                               |
 * |---------------------------------|----------------------------------------------------------------------|
 * | none, `[scenario:ok]`           | 200, content from `respond` (JSON-encoded), usage from text length   |
 * | `[scenario:slow:<ms>]`          | the same after `<ms>` (default 1000) before any header               |
 * | `[scenario:hang]`               | nothing, until the client disconnects or the server closes          |
 * | `[scenario:rate_limit:<s>]`     | 429 with `Retry-After: <s>` (default 1)                              |
 * | `[scenario:server_error]`       | 500                                                                  |
 * | `[scenario:unauthorized]`       | 401                                                                  |
 * | `[scenario:invalid_json]`       | 200 whose content is not JSON                                        |
 * | `[scenario:schema_violation]`   | 200 whose content is JSON without the expected fields                |
 * | `[scenario:fail_once:<key>]`    | 500 the first time `<key>` is seen by this server, then a valid answer |
 * | `[scenario:no_usage]`           | a valid answer without `usage`                                       |
 * | `[sleep:<ms>]` (combinable)     | waits `<ms>` first, like `latencyMs`                                 |
 *
 * Every request needs `Authorization: Bearer <key>` (any key, or `apiKey` when set), else 401. `latencyMs`
 * delays every answer; `failureRate` answers that share of requests with a 503. Waits end when the client
 * disconnects, which the server counts in `disconnects`. Nothing is logged.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigurationError } from '../config/aws.ts';
import type { ChatMessage } from '../ai/types.ts';
import { MockRateLimiter, type MockRateLimits } from './mock-rate-limit.ts';

/** What `respond` sees of a request. */
export interface MockChatContext {
  model: string;
  messages: ChatMessage[];
  jsonMode: boolean;
}

/** Produces the valid answer's content: an object (sent JSON-encoded) or a string (sent as is). */
export type MockRespond = (ctx: MockChatContext) => object | string;

/** A recorded request body, as the client sent it. */
export interface MockChatRequestBody {
  model: string;
  messages: ChatMessage[];
  response_format?: { type: string };
  [field: string]: unknown;
}

export interface MockAiServerOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Added before every answer. */
  latencyMs?: number;
  /** Share of requests, 0–1, answered with a 503 (after the latency). */
  failureRate?: number;
  /** Scenario for requests without a marker, e.g. `rate_limit` or `slow:1500`. Default `ok`. */
  scenario?: string;
  /** When set, only this bearer key is accepted. */
  apiKey?: string;
  /** Content of a valid answer; default {@link defaultMockRespond}. */
  respond?: MockRespond;
  /** Requests and tokens per minute beyond which it answers 429 with Retry-After (./mock-rate-limit.ts). */
  rateLimits?: MockRateLimits;
}

export interface MockAiServer {
  /** Base URL for an OpenAI client, e.g. `http://127.0.0.1:5123/v1`. */
  readonly url: string;
  readonly port: number;
  /** Every authorised request body, in arrival order. */
  readonly requests: MockChatRequestBody[];
  /** Requests whose client went away before the answer was sent. */
  readonly disconnects: number;
  /** Changes the default scenario (undefined: back to `ok`). */
  setScenario(scenario: string | undefined): void;
  /** Stops listening, ends pending waits and drops open connections. */
  close(): Promise<void>;
}

/** `{"answer": "...", "echo": "<first 40 chars of the last user message, markers removed>"}`. */
export const defaultMockRespond: MockRespond = ({ messages }) => {
  const prompt = stripMarkers(lastUserText(messages));
  return { answer: `Mock answer (${prompt.length} characters of prompt)`, echo: prompt.slice(0, 40) };
};

const MARKER = /\[(scenario|sleep):([^\]]*)\]/g;

/** The scenario and sleep markers in `text`; the last of each kind wins. */
export function parseMarkers(text: string): { scenario?: string; sleepMs?: number } {
  const found: { scenario?: string; sleepMs?: number } = {};
  for (const [, kind, value = ''] of text.matchAll(MARKER)) {
    if (kind === 'scenario') found.scenario = value;
    else if (/^\d+$/.test(value)) found.sleepMs = Number(value);
  }
  return found;
}

function stripMarkers(text: string): string {
  return text.replace(MARKER, '').trim();
}

function lastUserText(messages: readonly ChatMessage[]): string {
  return messages.findLast((m) => m.role === 'user')?.content ?? '';
}

/** Rough token count: four characters a token, at least one for non-empty text. */
const tokensOf = (text: string) => Math.ceil(text.length / 4);

/** Starts a server; resolves once it listens. */
export async function startMockAiServer(options: MockAiServerOptions = {}): Promise<MockAiServer> {
  const state = {
    requests: [] as MockChatRequestBody[],
    disconnects: 0,
    scenario: options.scenario,
    failedOnce: new Set<string>(),
    closing: new AbortController(),
    limiter: options.rateLimits ? new MockRateLimiter(options.rateLimits) : undefined,
  };
  const server = createServer((req, res) => {
    handle(req, res, options, state).catch(() => {
      if (!res.headersSent && !res.destroyed) sendError(res, 500, 'mock server error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}/v1`,
    port,
    requests: state.requests,
    get disconnects() {
      return state.disconnects;
    },
    setScenario(scenario) {
      state.scenario = scenario;
    },
    async close() {
      state.closing.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type ServerState = {
  requests: MockChatRequestBody[];
  disconnects: number;
  scenario: string | undefined;
  failedOnce: Set<string>;
  closing: AbortController;
  limiter: MockRateLimiter | undefined;
};

/** One request, from routing and auth to the scenario's answer. */
async function handle(req: IncomingMessage, res: ServerResponse, options: MockAiServerOptions, state: ServerState): Promise<void> {
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) state.disconnects += 1;
    gone.abort();
  });
  const path = (req.url ?? '').split('?')[0];
  if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/chat/completions')) {
    return sendError(res, 404, `no route ${req.method} ${path}`);
  }
  const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  // Echoes the refused key, as some OpenAI-compatible vendors do: the provider must keep it out of what it stores.
  if (!key || (options.apiKey !== undefined && key !== options.apiKey)) return sendError(res, 401, `Incorrect API key provided: ${key}`);
  const body = await readJson(req);
  if (!body) return sendError(res, 400, 'the body must be a chat completion request');
  state.requests.push(body);
  const limited = state.limiter?.admit(body);
  if (limited && !limited.admitted) {
    return sendError(res, 429, 'rate limit reached (mock RPM/TPM)', { 'retry-after': String(limited.retryAfterSeconds) });
  }

  const markers = parseMarkers(lastUserText(body.messages));
  const signal = AbortSignal.any([gone.signal, state.closing.signal]);
  const waited = await wait((options.latencyMs ?? 0) + (markers.sleepMs ?? 0), signal);
  if (!waited) return;
  if (Math.random() < (options.failureRate ?? 0)) return sendError(res, 503, 'mock failure (MOCK_AI_FAILURE_RATE)');
  const [name = 'ok', arg] = splitScenario(markers.scenario ?? state.scenario ?? 'ok');
  const scenario = Object.hasOwn(SCENARIOS, name) ? SCENARIOS[name] : undefined;
  if (!scenario) return sendError(res, 400, `unknown mock scenario "${name}"`);
  await scenario({ res, body, arg, signal, options, state });
}

function splitScenario(scenario: string): [string, string | undefined] {
  const at = scenario.indexOf(':');
  return at < 0 ? [scenario, undefined] : [scenario.slice(0, at), scenario.slice(at + 1)];
}

type ScenarioContext = {
  res: ServerResponse;
  body: MockChatRequestBody;
  arg: string | undefined;
  signal: AbortSignal;
  options: MockAiServerOptions;
  state: ServerState;
};

/** Scenario name → behaviour. Add a scenario here and in the table at the top of the file. */
const SCENARIOS: Record<string, (ctx: ScenarioContext) => void | Promise<void>> = {
  ok: (ctx) => sendCompletion(ctx, contentOf(ctx)),
  no_usage: (ctx) => sendCompletion(ctx, contentOf(ctx), { withUsage: false }),
  slow: async (ctx) => {
    if (await wait(Number(ctx.arg ?? 1000) || 0, ctx.signal)) sendCompletion(ctx, contentOf(ctx));
  },
  hang: async (ctx) => {
    await wait(Number.POSITIVE_INFINITY, ctx.signal);
  },
  rate_limit: (ctx) => sendError(ctx.res, 429, 'rate limit reached (mock)', { 'retry-after': String(Number(ctx.arg ?? 1) || 1) }),
  server_error: (ctx) => sendError(ctx.res, 500, 'internal error (mock)'),
  unauthorized: (ctx) => sendError(ctx.res, 401, 'invalid API key (mock)'),
  invalid_json: (ctx) => sendCompletion(ctx, '{"answer": "this JSON never ends'),
  schema_violation: (ctx) => sendCompletion(ctx, JSON.stringify({ unexpected: 'field', answer: 42 })),
  fail_once: (ctx) => {
    const key = ctx.arg ?? '';
    if (ctx.state.failedOnce.has(key)) return sendCompletion(ctx, contentOf(ctx));
    ctx.state.failedOnce.add(key);
    sendError(ctx.res, 500, `first call for "${key}" fails (mock)`);
  },
};

function contentOf({ body, options }: ScenarioContext): string {
  const respond = options.respond ?? defaultMockRespond;
  const jsonMode = body.response_format?.type === 'json_object';
  const content = respond({ model: body.model, messages: body.messages, jsonMode });
  return typeof content === 'string' ? content : JSON.stringify(content);
}

function sendCompletion({ res, body }: ScenarioContext, content: string, opts: { withUsage?: boolean } = {}): void {
  const promptTokens = body.messages.reduce((n, m) => n + tokensOf(m.content), 0);
  const completionTokens = tokensOf(content);
  sendJson(res, 200, {
    id: `chatcmpl-mock-${Date.now().toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    ...(opts.withUsage === false
      ? {}
      : { usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens } }),
  });
}

function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { message, type: 'mock_error', code: String(status) } }, headers);
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
async function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  const forever = !Number.isFinite(ms);
  return sleep(forever ? 2_147_483_647 : ms, true, { signal }).catch(() => false);
}

const MAX_BODY_BYTES = 1_000_000;

/** The body as a chat completion request, or undefined when it is not one. */
async function readJson(req: IncomingMessage): Promise<MockChatRequestBody | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MockChatRequestBody;
    return typeof body?.model === 'string' && Array.isArray(body.messages) ? body : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Options from the environment, for the local runtime: `MOCK_AI_PORT` (default 0), `MOCK_AI_LATENCY_MS`
 * (default 0), `MOCK_AI_FAILURE_RATE` (0–1, default 0), `MOCK_AI_SCENARIO` (default `ok`), `MOCK_AI_RPM` and
 * `MOCK_AI_TPM` (per minute; unset: no limit).
 * @throws ConfigurationError for a malformed value
 */
export function mockAiServerOptionsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): MockAiServerOptions {
  const num = (name: string, max: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return 0;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || value > max) throw new ConfigurationError(name, `must be a number from 0 to ${max}`);
    return value;
  };
  const limit = (name: string): number | undefined => {
    if (!env[name]?.trim()) return undefined;
    const value = num(name, 1_000_000_000);
    if (!Number.isInteger(value) || value < 1) throw new ConfigurationError(name, 'must be a whole number from 1');
    return value;
  };
  const rpm = limit('MOCK_AI_RPM');
  const tpm = limit('MOCK_AI_TPM');
  return {
    port: num('MOCK_AI_PORT', 65_535),
    latencyMs: num('MOCK_AI_LATENCY_MS', 600_000),
    failureRate: num('MOCK_AI_FAILURE_RATE', 1),
    ...(env.MOCK_AI_SCENARIO?.trim() ? { scenario: env.MOCK_AI_SCENARIO.trim() } : {}),
    ...(rpm !== undefined || tpm !== undefined ? { rateLimits: { ...(rpm !== undefined ? { rpm } : {}), ...(tpm !== undefined ? { tpm } : {}) } } : {}),
  };
}
