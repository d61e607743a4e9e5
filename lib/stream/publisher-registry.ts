/**
 * The process's realtime publisher (./protocol.ts StreamPublisher): what the lifecycle publishes a committed
 * status entry through, and what an attempt's stream publishes its batches through unless given another. A
 * process that has a realtime service registers its publisher once at start (a Lambda's module scope, the local
 * runtime's threads); until then, and wherever none is configured, it is {@link NO_STREAM_PUBLISHER}.
 *
 * A registration, not a parameter threaded through every transition: a transition happens in many places (the
 * API, the engine, the reaper, the local runtime's boot recovery), and a push is only a hint (a reader backfills
 * whatever it misses), so the lifecycle needs no say in where pushes go.
 */
import { NO_STREAM_PUBLISHER, type StreamPublisher, type StreamPush } from './protocol.ts';

let registered: StreamPublisher = NO_STREAM_PUBLISHER;

/** Makes `publisher` the process's publisher; returns the one it replaces (tests put it back). */
export function registerStreamPublisher(publisher: StreamPublisher): StreamPublisher {
  const previous = registered;
  registered = publisher;
  return previous;
}

/** The process's publisher (read at each publish, so a later registration applies to streams already open). */
export function streamPublisher(): StreamPublisher {
  return registered;
}

/**
 * Publishes through `publisher` (default: the registered one), never throwing: a publisher that breaks its
 * contract and throws costs the push, never the durable write before it.
 */
export function publishPush(push: StreamPush, publisher: StreamPublisher = registered): void {
  if (push.entries.length === 0) return;
  try {
    publisher.publish(push);
  } catch {
    // A hint lost: the reader backfills from the log.
  }
}
