/**
 * A push as AppSync Events publish requests: its entries packed into events (each a JSON text no larger than
 * the service's 240 KB per event) and the events into requests of at most 5 (publish-http.html). Every event
 * is itself a {@link StreamPush} of the same user and job, so a subscriber reads each `data` message alone.
 * An entry too large for any event is left out (its reader backfills it by `seq`), and counted.
 */
import type { StreamEntry, StreamPush } from '../stream/protocol.ts';
import { MAX_EVENTS_PER_PUBLISH, MAX_EVENT_BYTES } from './events-protocol.ts';

/** Room kept under the 240 KB event limit. */
export const DEFAULT_MAX_EVENT_BYTES = MAX_EVENT_BYTES - 4096;

export interface PublishBatches {
  /** Each inner array: the events (JSON texts) of one publish request, in `seq` order. */
  requests: string[][];
  /** Entries left out because one alone exceeds the event limit. */
  oversized: number;
}

/** The publish requests of `push`. */
export function pushToRequests(push: StreamPush, maxEventBytes = DEFAULT_MAX_EVENT_BYTES): PublishBatches {
  const head = `{"userId":${JSON.stringify(push.userId)},"jobId":${JSON.stringify(push.jobId)},"entries":[`;
  const overhead = byteLength(head) + 2;
  const events: string[] = [];
  let current: string[] = [];
  let size = overhead;
  let oversized = 0;
  const close = () => {
    if (current.length > 0) events.push(`${head}${current.join(',')}]}`);
    current = [];
    size = overhead;
  };
  for (const entry of push.entries) {
    const text = JSON.stringify(entry satisfies StreamEntry);
    const bytes = byteLength(text);
    if (overhead + bytes > maxEventBytes) {
      oversized += 1;
      continue;
    }
    if (size + bytes + (current.length > 0 ? 1 : 0) > maxEventBytes) close();
    size += bytes + (current.length > 0 ? 1 : 0);
    current.push(text);
  }
  close();
  const requests: string[][] = [];
  for (let i = 0; i < events.length; i += MAX_EVENTS_PER_PUBLISH) requests.push(events.slice(i, i + MAX_EVENTS_PER_PUBLISH));
  return { requests, oversized };
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
