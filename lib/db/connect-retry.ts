/**
 * Deploy-time patience with a database that is not reachable yet: a cluster or proxy created by the same
 * deployment may still be starting. Used by the migrator and the preflight, never on a request path.
 */
import { isDatabaseUnavailable } from './connection-errors.ts';

/** How long the deploy-time steps retry connection errors. */
export const CONNECT_RETRY_MS = 120_000;

export interface ConnectRetryOptions {
  /**
   * Retry connection errors for this long. Default 0: locally (`npm start`, tests) an unreachable server is
   * reported at once; the deploy-time Lambda passes {@link CONNECT_RETRY_MS}.
   */
  connectRetryMs?: number;
  /** Called before each wait for another attempt (the Lambda logs it). */
  onConnectRetry?: (err: unknown, attempt: number) => void;
}

/**
 * Runs `connect`, again after errors that mean "not reachable yet" ({@link isDatabaseUnavailable}), with backoff
 * up to 5 s, until `connectRetryMs` has passed; any other error (bad credentials, say) fails at once.
 */
export async function retryWhileUnavailable<T>(connect: () => Promise<T>, options: ConnectRetryOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.connectRetryMs ?? 0);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await connect();
    } catch (err) {
      const waitMs = Math.min(5_000, 250 * 2 ** (attempt - 1), deadline - Date.now());
      if (!isDatabaseUnavailable(err) || waitMs <= 0) throw err;
      options.onConnectRetry?.(err, attempt);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}
