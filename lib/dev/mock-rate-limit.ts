/**
 * Rate limits for the mock provider (./mock-ai-server.ts), as a provider enforces them: requests and tokens per
 * minute window of the mock's own clock. A request over either limit is answered 429 with `Retry-After`: the
 * seconds until the window ends. Tokens are counted as providers admit them, before the call: the prompt's
 * (four characters a token, as the mock reports usage) plus the request's `max_tokens`.
 *
 * Locally (`npm start`), `MOCK_AI_RPM` and `MOCK_AI_TPM` turn them on, so the engine's cooldown and fallback can
 * be watched in the console: set them below the engine's limits for `mock/*` (PROVIDER_LIMITS) and the mock's 429s
 * cool the model down for every consumer.
 */
import type { ChatMessage } from '../ai/types.ts';

export interface MockRateLimits {
  /** Requests per minute; unset: no limit. */
  rpm?: number;
  /** Tokens (prompt + max_tokens) per minute; unset: no limit. */
  tpm?: number;
}

/** The request fields the limiter reads. */
export interface RateLimitedRequest {
  messages: ChatMessage[];
  max_tokens?: unknown;
}

/** Counts one minute window at a time; `now` is injectable so a test can stand inside one window. */
export class MockRateLimiter {
  #windowStart = -1;
  #requests = 0;
  #tokens = 0;

  constructor(private readonly limits: MockRateLimits, private readonly now: () => number = Date.now) {}

  /** Admits the request (counting it) or returns the seconds until the window ends (the 429's Retry-After). */
  admit(request: RateLimitedRequest): { admitted: true } | { admitted: false; retryAfterSeconds: number } {
    const now = this.now();
    const windowStart = Math.floor(now / 60_000) * 60_000;
    if (windowStart !== this.#windowStart) {
      this.#windowStart = windowStart;
      this.#requests = 0;
      this.#tokens = 0;
    }
    const tokens = request.messages.reduce((n, m) => n + Math.ceil(m.content.length / 4), 0)
      + (typeof request.max_tokens === 'number' ? request.max_tokens : 0);
    const { rpm, tpm } = this.limits;
    if ((rpm !== undefined && this.#requests + 1 > rpm) || (tpm !== undefined && this.#tokens + tokens > tpm)) {
      return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000)) };
    }
    this.#requests += 1;
    this.#tokens += tokens;
    return { admitted: true };
  }
}
