/**
 * Realtime publishing around a handler: every entry point that can move a job or append to its stream (the user
 * and admin API functions, the consumers, the dispatcher, the reaper; the local runtime's threads) publishes its
 * stream entries through the process's registered publisher (lib/stream/publisher-registry.ts) and, before it
 * returns, waits at most {@link HANDLER_FLUSH_MS} for its own publishes still in flight: each invocation runs in
 * a publish scope of its own (lib/stream/publish-scope.ts), so where invocations share a process (the local
 * runtime's batches on one thread) one's flush neither waits for nor abandons another's publishes.
 *
 * Why a bound and not "until done": a Lambda must not return with requests in flight (the execution environment
 * is frozen with them and they fail or arrive late at the next invocation), yet a realtime service that is down
 * or silent must never slow a request or a batch noticeably. Publishing is best effort after the durable append:
 * what the bound abandons, readers backfill from the log (docs/streaming.md "Publisher").
 */
import { NO_STREAM_PUBLISHER, type StreamPublisher } from '../stream/protocol.ts';
import { inPublishScope } from '../stream/publish-scope.ts';
import { registerStreamPublisher, streamPublisher } from '../stream/publisher-registry.ts';
import { REALTIME_ENDPOINT_ENV, streamPublisherFromEnv, type PublisherSinks } from './publisher-from-env.ts';

/**
 * The longest a handler waits, before it returns, for its realtime publishes in flight: a healthy publish
 * (one HTTPS request to AppSync Events) takes tens of milliseconds; a dead endpoint fails at once; a silent one is
 * abandoned here instead of at the publisher's 2 s request timeout. What it adds to a request or a batch is at
 * most this, whatever the realtime service does.
 */
export const HANDLER_FLUSH_MS = 250;

let misconfigured = false;

/**
 * The process's publisher: the one registered (the local runtime registers its own), else — the first time a
 * handler runs with {@link REALTIME_ENDPOINT_ENV} set — one built from the environment and registered. A
 * misconfigured endpoint is reported once (an ERROR line) and publishes nothing: readers fall back to the log,
 * and the functions keep serving.
 */
export function ensureStreamPublisher(env: Readonly<Record<string, string | undefined>> = process.env, sinks: PublisherSinks = {}): StreamPublisher {
  if (streamPublisher() !== NO_STREAM_PUBLISHER || misconfigured || !env[REALTIME_ENDPOINT_ENV]?.trim()) return streamPublisher();
  try {
    registerStreamPublisher(streamPublisherFromEnv(env, sinks));
  } catch (err) {
    misconfigured = true;
    console.error(JSON.stringify({ level: 'ERROR', message: 'realtime publishing is off: its configuration is invalid', error: (err as Error).message }));
  }
  return streamPublisher();
}

/**
 * `handler` with the process's publisher ensured before it runs, run in a publish scope of its own, and its
 * publishes flushed (at most `flushMs`) after it settles, whether it returned or threw. The flush never throws, so
 * the handler's own outcome is what the caller sees.
 */
export function withStreamPublishing<A extends unknown[], R>(handler: (...args: A) => Promise<R>, flushMs = HANDLER_FLUSH_MS): (...args: A) => Promise<R> {
  return (...args: A): Promise<R> => inPublishScope(async () => {
    ensureStreamPublisher();
    try {
      return await handler(...args);
    } finally {
      await streamPublisher().flush(flushMs);
    }
  });
}
