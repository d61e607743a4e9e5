/** Small helpers shared by the outbox senders. */

/** Splits `items` into consecutive chunks of at most `size` (batch APIs take ≤ 10 entries). */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * A short, loggable description of a failed call: error name and message, bounded in length. AWS SDK and
 * network errors do not echo request bodies, so no payload reaches `lastError` or the logs this way.
 */
export function describeError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : `non-error thrown: ${typeof err}`;
  return text.slice(0, 500);
}
