/**
 * The shapes shared by the local mock provider's modules (./mock-ai-server.ts and the modules it is split into):
 * its options, what its `respond` function sees, and a recorded request.
 */
import type { MockRateLimits } from './mock-rate-limit.ts';
import type { ChatMessage } from '../ai/types.ts';

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
  /** True: the answer goes out as Server-Sent Events (`chat.completion.chunk`s). */
  stream?: boolean;
  /** `include_usage: true`: a last chunk carries the call's usage. */
  stream_options?: { include_usage?: boolean };
  [field: string]: unknown;
}

export interface MockAiServerOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Added before every answer (before any header). */
  latencyMs?: number;
  /** Share of requests, 0–1, answered with a 503 (after the latency). */
  failureRate?: number;
  /** Scenario for requests without a marker, e.g. `rate_limit`, `slow:1500` or `cut:20`. Default `ok`. */
  scenario?: string;
  /** When set, only this bearer key is accepted. */
  apiKey?: string;
  /** Content of a valid answer; default `defaultMockRespond` (./mock-scenarios.ts). */
  respond?: MockRespond;
  /** Pace of a streamed answer, in tokens a second; 0 or unset: every token at once. */
  tokensPerSecond?: number;
  /** Wait between a streamed answer's headers (and role chunk) and its first token. */
  firstTokenDelayMs?: number;
  /** Requests and tokens per minute beyond which it answers 429 with Retry-After (./mock-rate-limit.ts). */
  rateLimits?: MockRateLimits;
  /**
   * Called as token `index` (0-based) of a streamed answer to `body` is written to the socket: when the provider
   * "said" it (bench/stream.ts measures the time from there to a subscribed client).
   */
  onToken?(body: MockChatRequestBody, index: number): void;
}

/** A complete answer the server sent: its content and the usage it reported (undefined: none reported). */
export interface MockAnswer {
  content: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  streamed: boolean;
}
