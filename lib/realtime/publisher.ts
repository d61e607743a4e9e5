/**
 * The StreamPublisher that sends pushes to an AppSync Events HTTP endpoint (or the local hub, same protocol):
 * `POST <endpoint>` `{channel, events}` signed with SigV4, after the durable append.
 *
 * Invariants (lib/stream/protocol.ts): `publish` never throws and never waits on the network; `flush` never
 * throws and returns within its bound with nothing of its own left in flight (what is still queued or running
 * then is abandoned and counted): inside a publish scope (lib/stream/publish-scope.ts: one handler invocation)
 * what that scope published, outside one everything. A realtime service that is down, slow or throttling costs
 * a job nothing but the hint:
 * - at most `maxInFlight` requests run at once, each bounded by `timeoutMs`, none retried;
 * - at most `maxQueued` wait besides those the free slots will start; a push beyond that is dropped and counted;
 * - a job's requests go one at a time in `seq` order (no ordering across requests is documented by the
 *   service, so the publisher does not rely on one); readers order and de-duplicate by `seq` anyway;
 * - a push joins its job's last waiting request when the events fit (at most 5 a request), and requests start
 *   only once the code that made a push has run to its next await (a microtask later): pushes made together
 *   (an attempt's last batch and its `succeeded` entry, published as their commit returns) go as one request,
 *   and the pushes of a job that moves fast (running, its chunks, succeeded) cost one signed request each only
 *   while the service keeps up, and fewer when it does not.
 * Every failure and drop goes to `report` (metrics and a log line without payload).
 */
import type { StreamPublisher, StreamPush } from '../stream/protocol.ts';
import { currentPublishScope, joinScope, leaveScopes, type ScopedRequest } from '../stream/publish-scope.ts';
import { MAX_EVENTS_PER_PUBLISH } from './events-protocol.ts';
import { DEFAULT_MAX_EVENT_BYTES, pushToRequests } from './push-events.ts';
import { channelOfJob } from './server-channel.ts';
import type { EventsSigner } from './sigv4.ts';
import { keepAlivePost, type JsonPost } from './json-post.ts';

export const DEFAULT_PUBLISH_TIMEOUT_MS = 2_000;
export const DEFAULT_MAX_IN_FLIGHT = 8;
export const DEFAULT_MAX_QUEUED = 256;

/** A publish that reached the service (or tried to) and did not succeed. */
export interface PublishFailure {
  kind: 'failed';
  jobId: string;
  reason: 'timeout' | 'network' | 'http' | 'rejected';
  status?: number;
  errorType?: string;
  /** Events lost with it. */
  events: number;
}

/** A publish never attempted. */
export interface PublishDrop {
  kind: 'dropped';
  jobId: string;
  reason: 'queue-full' | 'oversized' | 'bad-channel' | 'flush-timeout';
  /** Requests (queue-full, flush-timeout, bad-channel) or entries (oversized) dropped. */
  count: number;
}

export type PublishProblem = PublishFailure | PublishDrop;

export interface PublisherStats {
  /** Requests the service accepted whole. */
  published: number;
  failed: number;
  dropped: number;
  inFlight: number;
  queued: number;
}

export interface HttpStreamPublisherOptions {
  /** The HTTP publish endpoint, e.g. `https://x.appsync-api.eu-west-1.amazonaws.com/event`. */
  httpEndpoint: string;
  sign: EventsSigner;
  timeoutMs?: number;
  maxInFlight?: number;
  maxQueued?: number;
  maxEventBytes?: number;
  report?(problem: PublishProblem): void;
  /** After every flush (the Lambda publishes its EMF metrics here). */
  onFlushed?(): void;
  /** The transport (default: node:http(s) with keep-alive, ./json-post.ts). */
  post?: JsonPost;
}

interface QueuedRequest extends ScopedRequest {
  jobId: string;
  channel: string;
  events: string[];
  controller?: AbortController;
  abandoned?: boolean;
}

export class HttpStreamPublisher implements StreamPublisher {
  private readonly url: URL;
  private readonly queue: QueuedRequest[] = [];
  private readonly running = new Set<QueuedRequest>();
  private readonly busyChannels = new Set<string>();
  private idleWaiters: (() => void)[] = [];
  private pumpScheduled = false;
  private readonly counts = { published: 0, failed: 0, dropped: 0 };

  constructor(private readonly o: HttpStreamPublisherOptions) {
    this.url = new URL(o.httpEndpoint);
  }

  publish(push: StreamPush): void {
    try {
      this.enqueue(push);
    } catch {
      this.drop({ kind: 'dropped', jobId: String(push?.jobId), reason: 'bad-channel', count: 1 });
    }
  }

  async flush(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const scope = currentPublishScope();
      const own = (): QueuedRequest[] => (scope ? scope.requests() as QueuedRequest[] : [...this.running, ...this.queue]);
      if (own().length > 0) {
        const settled = scope ? scope.idle() : new Promise<void>((resolve) => this.idleWaiters.push(resolve));
        await Promise.race([settled, new Promise<void>((resolve) => { timer = setTimeout(resolve, Math.max(0, timeoutMs)); })]);
      }
      this.abandon(own());
    } catch {
      // never throws
    } finally {
      clearTimeout(timer);
      try {
        this.o.onFlushed?.();
      } catch {
        // a metrics failure is not the caller's
      }
    }
  }

  /** Counters, and what is in flight and waiting now. */
  stats(): PublisherStats {
    return { ...this.counts, inFlight: this.running.size, queued: this.queue.length };
  }

  private enqueue(push: StreamPush): void {
    const channel = channelOfJob(push.userId, push.jobId);
    const { requests, oversized } = pushToRequests(push, this.o.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES);
    const scope = currentPublishScope();
    if (oversized > 0) this.drop({ kind: 'dropped', jobId: push.jobId, reason: 'oversized', count: oversized });
    for (const events of requests) {
      const waiting = this.lastQueued(channel);
      if (waiting && waiting.events.length + events.length <= MAX_EVENTS_PER_PUBLISH) {
        waiting.events.push(...events);
        joinScope(waiting, scope);
        continue;
      }
      if (this.queue.length >= this.queueRoom()) {
        this.drop({ kind: 'dropped', jobId: push.jobId, reason: 'queue-full', count: 1 });
        continue;
      }
      const item: QueuedRequest = { jobId: push.jobId, channel, events };
      joinScope(item, scope);
      this.queue.push(item);
    }
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      queueMicrotask(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    }
  }

  /**
   * How many requests may wait: `maxQueued`, plus the free request slots, which requests made in
   * this turn take when the pump starts them a microtask later.
   */
  private queueRoom(): number {
    return (this.o.maxQueued ?? DEFAULT_MAX_QUEUED) + Math.max(0, (this.o.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT) - this.running.size);
  }

  /** The channel's last request still waiting (not started), if any. */
  private lastQueued(channel: string): QueuedRequest | undefined {
    for (let i = this.queue.length - 1; i >= 0; i -= 1) if (this.queue[i]!.channel === channel) return this.queue[i];
    return undefined;
  }

  /** Starts queued requests while there is room, never two of one channel at once. */
  private pump(): void {
    const limit = this.o.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    for (let i = 0; i < this.queue.length && this.running.size < limit;) {
      const item = this.queue[i]!;
      if (this.busyChannels.has(item.channel)) {
        i += 1;
        continue;
      }
      this.queue.splice(i, 1);
      this.start(item);
    }
    if (this.isIdle()) this.wakeIdle();
  }

  private start(item: QueuedRequest): void {
    item.controller = new AbortController();
    this.running.add(item);
    this.busyChannels.add(item.channel);
    const timer = setTimeout(() => item.controller!.abort(), this.o.timeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS);
    this.send(item, item.controller.signal)
      .then(
        (failure) => (failure ? this.fail(item, failure) : item.abandoned || (this.counts.published += 1)),
        (err: unknown) => this.fail(item, {
          kind: 'failed', jobId: item.jobId, reason: item.controller!.signal.aborted ? 'timeout' : 'network', events: item.events.length, ...errorTypeOf(err),
        }),
      )
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(timer);
        if (this.running.delete(item)) this.busyChannels.delete(item.channel);
        leaveScopes(item);
        this.pump();
      });
  }

  /** One request; resolves to a failure, or undefined when every event was accepted. */
  private async send(item: QueuedRequest, signal: AbortSignal): Promise<PublishFailure | undefined> {
    const body = JSON.stringify({ channel: item.channel, events: item.events });
    const signed = await abortable(this.o.sign(this.url, body), signal);
    const headers = Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name.toLowerCase() !== 'host'));
    const res = await (this.o.post ?? keepAlivePost)(this.url, { headers, body, signal });
    const answer = parseAnswer(res.body);
    if (res.status < 200 || res.status > 299) {
      const errorType = answer?.errors?.[0]?.errorType;
      return { kind: 'failed', jobId: item.jobId, reason: 'http', status: res.status, events: item.events.length, ...(errorType ? { errorType } : {}) };
    }
    const rejected = Array.isArray(answer?.failed) ? answer.failed.length : 0;
    return rejected > 0 ? { kind: 'failed', jobId: item.jobId, reason: 'rejected', status: res.status, events: rejected } : undefined;
  }

  private fail(item: QueuedRequest, failure: PublishFailure): void {
    if (item.abandoned) return;
    this.counts.failed += 1;
    this.report(failure);
  }

  private drop(drop: PublishDrop): void {
    this.counts.dropped += drop.count;
    this.report(drop);
  }

  private report(problem: PublishProblem): void {
    try {
      this.o.report?.(problem);
    } catch {
      // reporting must not fail a publish
    }
  }

  /** Flush ran out of time: abort what of `items` runs, forget what waits, count both; the rest goes on. */
  private abandon(items: readonly QueuedRequest[]): void {
    if (items.length === 0) return;
    const gone = new Set(items);
    const rest = this.queue.filter((item) => !gone.has(item));
    this.queue.splice(0, this.queue.length, ...rest);
    for (const item of items) {
      item.abandoned = true;
      item.controller?.abort();
      if (this.running.delete(item)) this.busyChannels.delete(item.channel);
      leaveScopes(item);
      this.drop({ kind: 'dropped', jobId: item.jobId, reason: 'flush-timeout', count: 1 });
    }
    this.pump();
  }

  private isIdle(): boolean {
    return this.running.size === 0 && this.queue.length === 0;
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    promise.then(resolve, reject);
  });
}

function parseAnswer(text: string): { failed?: unknown[]; errors?: { errorType?: string }[] } | undefined {
  try {
    return JSON.parse(text) as { failed?: unknown[]; errors?: { errorType?: string }[] };
  } catch {
    return undefined;
  }
}

function errorTypeOf(err: unknown): { errorType?: string } {
  const e = err as { name?: unknown; code?: unknown; cause?: { code?: unknown } } | undefined;
  const name = e?.cause?.code ?? e?.code ?? e?.name;
  return typeof name === 'string' ? { errorType: name } : {};
}
