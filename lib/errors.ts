/**
 * The error base every typed failure in the engine extends. Classify with `instanceof`, never by message.
 * `code` is stable and public; `message` is safe to show users; internal detail goes in `cause`
 * (logged and shown to admins only).
 */
export abstract class EngineError extends Error {
  /** Stable machine-readable code (e.g. `JOB_NOT_FOUND`, `PROVIDER_RATE_LIMITED`). */
  abstract readonly code: string;
  /** Whether running the same work again may succeed. */
  readonly retryable: boolean = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
