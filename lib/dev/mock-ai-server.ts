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
 * | `[scenario:cut:<n>]`            | streamed: `<n>` tokens (default 10), then the socket closes; not streamed: the socket closes |
 * | `[scenario:rate_limit_mid:<n>]` | streamed: `<n>` tokens, then a rate-limit error event; not streamed: 429 |
 * | `[sleep:<ms>]` (combinable)     | waits `<ms>` first, like `latencyMs`                                 |
 * | `[tps:<n>]` (combinable)        | streams `<n>` tokens a second, like `tokensPerSecond`                |
 * | `[first_token:<ms>]` (combinable) | waits `<ms>` between a stream's headers and its first token, like `firstTokenDelayMs` |
 *
 * A request with `stream: true` gets its answer as `chat.completion.chunk` Server-Sent Events, four characters a
 * token, with a final usage chunk when `stream_options.include_usage` is set (./mock-replies.ts); others get one
 * JSON completion. Every request needs `Authorization: Bearer <key>` (any key, or `apiKey` when set), else 401.
 * `latencyMs` delays every answer; `failureRate` answers that share of requests with a 503; `rateLimits` answers
 * requests beyond its requests or tokens per minute with a 429 and `Retry-After` (./mock-rate-limit.ts). Waits end when the
 * client disconnects, which the server counts in `disconnects` (a connection the server cuts on purpose is not
 * counted). Nothing is logged.
 *
 * Handling a request is a pipeline of stages ({@link PIPELINE}): each either answers (and the pipeline stops) or
 * lets the next one run. A new concern (say, per-key rate limits) is a new stage, not a branch in the others.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseMarkers, lastUserText, type MockMarkers } from './mock-markers.ts';
import { sendError, wait } from './mock-replies.ts';
import { SCENARIOS } from './mock-scenarios.ts';
import { MockRateLimiter } from './mock-rate-limit.ts';
import type { MockAiServerOptions, MockAnswer, MockChatRequestBody } from './mock-ai-types.ts';
import { readBodyUpTo } from './read-body.ts';

export type { MockAiServerOptions, MockAnswer, MockChatContext, MockChatRequestBody, MockRespond } from './mock-ai-types.ts';
export { parseMarkers } from './mock-markers.ts';
export { defaultMockRespond } from './mock-scenarios.ts';
export { mockAiServerOptionsFromEnv } from './mock-ai-env.ts';

export interface MockAiServer {
  /** Base URL for an OpenAI client, e.g. `http://127.0.0.1:5123/v1`. */
  readonly url: string;
  readonly port: number;
  /** Every authorised request body, in arrival order. */
  readonly requests: MockChatRequestBody[];
  /** Every complete answer sent (content and reported usage), in the order they finished. */
  readonly answers: MockAnswer[];
  /** Requests whose client went away before the answer was sent. */
  readonly disconnects: number;
  /** Changes the default scenario (undefined: back to `ok`). */
  setScenario(scenario: string | undefined): void;
  /** Stops listening, ends pending waits and drops open connections. */
  close(): Promise<void>;
}

/** What lives as long as the server. */
interface ServerState {
  options: MockAiServerOptions;
  requests: MockChatRequestBody[];
  answers: MockAnswer[];
  disconnects: number;
  scenario: string | undefined;
  failedOnce: Set<string>;
  closing: AbortController;
  /** `rateLimits` (./mock-rate-limit.ts): undefined when none are set. */
  limiter: MockRateLimiter | undefined;
}

/** One request as it goes through the pipeline; later stages read what earlier ones found. */
export interface MockRequest {
  req: IncomingMessage;
  res: ServerResponse;
  server: ServerState;
  /** Aborts when the client goes away or the server closes. */
  signal: AbortSignal;
  /** Set by the body stage. */
  body?: MockChatRequestBody;
  markers?: MockMarkers;
  /** The connection was cut on purpose (not a client disconnect). */
  cut: boolean;
}

/** One step: resolves true when it answered the request (the pipeline stops there). */
export type MockStage = (r: MockRequest) => boolean | Promise<boolean>;

const route: MockStage = ({ req, res }) => {
  const path = (req.url ?? '').split('?')[0];
  if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) return false;
  sendError(res, 404, `no route ${req.method} ${path}`);
  return true;
};

const authorize: MockStage = ({ req, res, server }) => {
  const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (key && (server.options.apiKey === undefined || key === server.options.apiKey)) return false;
  // Echoes the refused key, as some OpenAI-compatible vendors do: the provider must keep it out of what it stores.
  sendError(res, 401, `Incorrect API key provided: ${key}`);
  return true;
};

const readBody: MockStage = async (r) => {
  r.body = await readJson(r.req);
  if (!r.body) {
    sendError(r.res, 400, 'the body must be a chat completion request');
    return true;
  }
  r.server.requests.push(r.body);
  r.markers = parseMarkers(lastUserText(r.body.messages));
  return false;
};

/** Requests and tokens per minute beyond `rateLimits`: 429 with `Retry-After` to the window's end. */
const rateLimit: MockStage = ({ server, body, res }) => {
  const limited = server.limiter?.admit(body!);
  if (!limited || limited.admitted) return false;
  sendError(res, 429, 'rate limit reached (mock RPM/TPM)', { 'retry-after': String(limited.retryAfterSeconds) });
  return true;
};

/** `latencyMs` and `[sleep:<ms>]`; a client that left meanwhile ends the request. */
const delay: MockStage = async ({ server, markers, signal }) => !(await wait((server.options.latencyMs ?? 0) + (markers?.sleepMs ?? 0), signal));

const randomFailure: MockStage = ({ server, res }) => {
  if (Math.random() >= (server.options.failureRate ?? 0)) return false;
  sendError(res, 503, 'mock failure (MOCK_AI_FAILURE_RATE)');
  return true;
};

const runScenario: MockStage = async (r) => {
  const [name = 'ok', arg] = splitScenario(r.markers?.scenario ?? r.server.scenario ?? 'ok');
  const scenario = Object.hasOwn(SCENARIOS, name) ? SCENARIOS[name] : undefined;
  if (!scenario) {
    sendError(r.res, 400, `unknown mock scenario "${name}"`);
    return true;
  }
  const { options, failedOnce } = r.server;
  const pace = {
    tokensPerSecond: r.markers?.tokensPerSecond ?? options.tokensPerSecond ?? 0,
    firstTokenMs: r.markers?.firstTokenMs ?? options.firstTokenDelayMs ?? 0,
  };
  await scenario({
    res: r.res, body: r.body!, signal: r.signal, pace, arg, options, failedOnce,
    markCut: () => (r.cut = true), onAnswer: (answer) => r.server.answers.push(answer),
    ...(options.onToken ? { onToken: (index: number) => options.onToken!(r.body!, index) } : {}),
  });
  return true;
};

/** The stages, in order. */
const PIPELINE: readonly MockStage[] = [route, authorize, readBody, rateLimit, delay, randomFailure, runScenario];

/** Starts a server; resolves once it listens. */
export async function startMockAiServer(options: MockAiServerOptions = {}): Promise<MockAiServer> {
  const state: ServerState = {
    options, requests: [], answers: [], disconnects: 0, scenario: options.scenario, failedOnce: new Set(), closing: new AbortController(),
    limiter: options.rateLimits ? new MockRateLimiter(options.rateLimits) : undefined,
  };
  const server = createServer((req, res) => {
    handle(req, res, state).catch(() => {
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
    answers: state.answers,
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

async function handle(req: IncomingMessage, res: ServerResponse, server: ServerState): Promise<void> {
  const gone = new AbortController();
  const r: MockRequest = { req, res, server, signal: AbortSignal.any([gone.signal, server.closing.signal]), cut: false };
  res.on('close', () => {
    if (!res.writableFinished && !r.cut) server.disconnects += 1;
    gone.abort();
  });
  for (const stage of PIPELINE) if (await stage(r)) return;
}

function splitScenario(scenario: string): [string, string | undefined] {
  const at = scenario.indexOf(':');
  return at < 0 ? [scenario, undefined] : [scenario.slice(0, at), scenario.slice(at + 1)];
}

const MAX_BODY_BYTES = 1_000_000;

/** The body as a chat completion request, or undefined when it is not one. */
async function readJson(req: IncomingMessage): Promise<MockChatRequestBody | undefined> {
  const raw = await readBodyUpTo(req, MAX_BODY_BYTES);
  if (raw === undefined) return undefined;
  try {
    const body = JSON.parse(raw.toString('utf8')) as MockChatRequestBody;
    return typeof body?.model === 'string' && Array.isArray(body.messages) ? body : undefined;
  } catch {
    return undefined;
  }
}
