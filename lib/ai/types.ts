/**
 * The provider boundary. Everything above it (router, gateway, engine) speaks these types; everything below
 * it (the OpenAI-compatible client, the mock server) maps its wire format and errors onto them.
 * Providers throw only JobFailure subclasses (lib/jobs/failures.ts).
 */
import type { CredentialMode } from '../db/generated/enums.ts';
import type { SqlStatement } from '../db/sql.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Ask for a JSON object (`response_format: { type: 'json_object' }`). */
  jsonMode: boolean;
  maxTokens?: number;
  temperature?: number;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** One provider/model pair a tier may route to. */
export interface ModelRoute {
  provider: string;
  model: string;
}

export interface ProviderReply {
  /** The whole answer: every delta reported through `onDelta`, concatenated. */
  content: string;
  /** What the provider reported at the end of the stream; zeros when it reported nothing. */
  usage: TokenUsage;
}

/** Per-call options of {@link AiProvider.complete}. */
export interface ProviderCallOptions {
  apiKey: string;
  signal: AbortSignal;
  /**
   * Deadline from sending the request to the first token of the answer (a provider may accept the connection
   * and hold it for minutes, sending keep-alives but no token). Unset: only the provider's total deadline.
   */
  firstTokenTimeoutMs?: number;
  /**
   * Receives the answer's text as it arrives, in order, synchronously while the stream is read. It must not
   * throw (an error it throws ends the call and is rethrown unchanged).
   */
  onDelta?: (text: string) => void;
}

/** An OpenAI-compatible chat completion endpoint, called with a streamed answer. */
export interface AiProvider {
  readonly name: string;
  /**
   * One call, no retries of its own. Must stop promptly when `signal` aborts, also while the answer streams.
   * @throws ProviderRateLimitedError | ProviderTimeoutError | ProviderUnavailableError | CredentialInvalidError
   */
  complete(request: ChatRequest & { model: string }, opts: ProviderCallOptions): Promise<ProviderReply>;
}

/**
 * Where the gateway sends one provider call's text as it arrives (it opens one per route it tries). The engine's
 * implementation turns the text into previews for the job's watchers (lib/stream/preview-reader.ts).
 */
export interface AnswerSink {
  /** More of the answer, in order. Never throws. */
  write(delta: string): void;
  /**
   * True once something written here was shown to a watcher. The gateway then no longer falls back to the next
   * route when this call fails: a watcher would see two answers run together (see lib/ai/gateway.ts).
   */
  readonly shown: boolean;
}

/** The keys a job may use: the platform's per provider, or the user's own (DeepSeek only). */
export interface CredentialSet {
  mode: CredentialMode;
  /** UserModelCredential id in `user_deepseek_key` mode. */
  credentialId?: string;
  /** The API key for `provider`, or undefined when this credential cannot call it (the route is skipped). */
  keyFor(provider: string): string | undefined;
}

/** Reported for every provider call, success or failure, so the engine can write the usage ledger. */
export interface ProviderCallRecord {
  route: ModelRoute;
  /** What the provider reported; zeros when it reported nothing (e.g. a failed or aborted call). */
  usage: TokenUsage;
  latencyMs: number;
  /** Set when the call failed: the JobFailure code, or {@link ABORTED_CALL_CODE} when the caller aborted it. */
  errorCode?: string;
  /** True when the caller's signal ended the call; the engine decides whether that was a timeout or a cancel. */
  aborted?: boolean;
  /**
   * The settlement of the capacity the call held (lib/capacity/), when it held any. Whoever writes the call's
   * ledger row {@link CallSettlement.claim}s it and runs it in the same transaction; unclaimed, the gateway
   * runs it alone after `onCall`.
   */
  settlement?: CallSettlement;
}

/** The statements that settle one call's hold: claimed once, by the ledger write or by the gateway. */
export interface CallSettlement {
  readonly claimed: boolean;
  /** Takes the statements (idempotent SQL: only a held hold is settled); the caller runs them. */
  claim(): SqlStatement[];
  /** Runs them alone, unless claimed. */
  runUnclaimed(): Promise<void>;
}

/** `errorCode` of a call the caller's signal aborted (not a JobFailure code: the engine maps it). */
export const ABORTED_CALL_CODE = 'ABORTED';

export interface GenerateResult {
  content: string;
  usage: TokenUsage;
  route: ModelRoute;
  latencyMs: number;
}
