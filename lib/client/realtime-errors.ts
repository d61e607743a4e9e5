/**
 * What the realtime client reports: the service's `errorType` as the stable code (UnauthorizedException,
 * BadRequestException, …; lib/realtime/events-protocol.ts), or one of the client's own below, and whether
 * trying again can help. Nothing here is fatal to a reader: it falls back to the stream API's long-poll.
 */

export const CLIENT_ERROR_TYPES = {
  /** The connection closed or failed without a protocol error (network, service restart); retried. */
  connectionLost: 'ConnectionLost',
  /** No `ka` or other message within the announced connectionTimeoutMs; retried. */
  keepAliveTimeout: 'KeepAliveTimeout',
  /** No `connection_ack` within the handshake timeout; retried. */
  handshakeTimeout: 'HandshakeTimeout',
  /** A `data` message that is not a StreamPush; ignored, reported. */
  invalidPush: 'InvalidPush',
} as const;

/** Error types after which the same request cannot succeed. */
const FINAL = new Set(['UnauthorizedException', 'BadRequestException', 'UnsupportedOperation']);

export class RealtimeError extends Error {
  /** The service's `errorType`, or one of {@link CLIENT_ERROR_TYPES}. */
  readonly errorType: string;
  /** False when repeating the same request is refused again (e.g. another user's channel, an expired token). */
  readonly retryable: boolean;

  constructor(errorType: string, message: string, options?: { cause?: unknown }) {
    super(`${errorType}: ${message}`, options);
    this.name = 'RealtimeError';
    this.errorType = errorType;
    this.retryable = !FINAL.has(errorType);
  }
}

/** The first error of a service message's `errors`, as a RealtimeError. */
export function realtimeErrorOf(errors: unknown, fallbackType: string): RealtimeError {
  const first = Array.isArray(errors) ? (errors[0] as { errorType?: unknown; message?: unknown } | undefined) : undefined;
  const type = typeof first?.errorType === 'string' && first.errorType !== '' ? first.errorType : fallbackType;
  return new RealtimeError(type, typeof first?.message === 'string' ? first.message : 'no message');
}

/** The delay before reconnect attempt `attempt` (0-based): exponential, capped, with full jitter over its upper half. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
