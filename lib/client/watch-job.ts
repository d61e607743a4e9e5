/**
 * `watchJob`: follow one job to its end — its status changes and its output as the model writes it — through the
 * realtime push when there is one, and the stream log over HTTP always (docs/streaming.md "Watching a job"). Runs
 * in Node 24 and browsers (global fetch, WebSocket and WebCrypto; nothing Node-only): the CLI, the console and API
 * users share it.
 *
 * How it stays exact: pushes are hints. The watcher subscribes to the job's channel, reads the log from the last
 * `seq` it holds after every (re)subscribe and whenever a push reveals a gap, and applies everything through the
 * pure reader (lib/stream/reader-state.ts), which de-duplicates by `seq` and drops a superseded attempt's text.
 * While it has no live subscription (none on the stage, connecting, dropped, refused) it long-polls the log
 * instead. Live, a push lost with nothing after it (the final status, say) is caught by a read after
 * `quietResyncMs` without a push. It resolves once a terminal status (succeeded, failed, cancelled) is applied.
 */
import { ownerSegmentOf } from '../realtime/channel.ts';
import type { StatusEntry, StreamEntry } from '../stream/protocol.ts';
import { applyStreamEntries, applyStreamPage, emptyReaderState, type StreamReaderState } from '../stream/reader-state.ts';
import { createRealtimeClient, type RealtimeClient, type RealtimeError, type RealtimeSubscription } from './realtime-client.ts';
import { WatchJobError, fetchRealtimeConfig, fetchStreamPage, type ApiAccess } from './stream-http.ts';

export { WatchJobError, type ApiAccess } from './stream-http.ts';

/** What a watcher is told, in `seq` order, each thing once. */
export interface WatchJobHandlers {
  /** More text of output field `field` (append it). */
  onText?(delta: string, field: string): void;
  /** One complete element of array field `field`, at `index`. */
  onItem?(item: unknown, index: number, field: string): void;
  /** A status change (queued, running, a retry scheduled, succeeded with `resultUrl`, failed with `error`, cancelled). */
  onStatus?(status: StatusEntry): void;
  /** Attempt `attempt` began: the text and items shown so far belong to a superseded attempt — drop them. */
  onAttempt?(attempt: number): void;
  /** After every change: the whole view (text per field, items per field, status), for UIs that render it whole. */
  onChange?(state: StreamReaderState): void;
  /** How entries arrive now: pushed (`realtime`) or read (`long-poll`, with the reason when realtime failed). */
  onTransport?(transport: 'realtime' | 'long-poll', reason?: RealtimeError): void;
}

/** Where to subscribe: an Event API's (or the local hub's) HTTP endpoint, and the job owner's segment. */
export interface RealtimeTarget {
  httpEndpoint: string;
  /** The job owner's owner segment; default: the `owner` option's, else the caller's (from `GET /api/ai/realtime`). */
  ownerSegment?: string;
}

export interface WatchJobOptions extends ApiAccess, WatchJobHandlers {
  /**
   * `'discover'` (default): ask `GET /api/ai/realtime`; a target: subscribe there; `false`: long-poll only.
   * Whatever fails on the realtime side, the watcher falls back to the long-poll.
   */
  realtime?: 'discover' | RealtimeTarget | false;
  /** The job owner's `sub` when it is not the caller's (an admin watching a user's job). */
  owner?: string;
  /** A realtime client to share (one connection for many watches); default: one of the watch's own. */
  realtimeClient?: RealtimeClient;
  signal?: AbortSignal;
  /** The long-poll's `wait` (seconds, 1–20; default 20). */
  waitSeconds?: number;
  /** Live, read the log after this long without a push (default 15 s). */
  quietResyncMs?: number;
}

export interface WatchJobResult {
  /** The terminal status entry. */
  status: StatusEntry;
  /** The final view: the last attempt's text and items, `lastSeq`. */
  state: StreamReaderState;
}

/**
 * Watches job `jobId` until it is finished; resolves with its terminal status and final view.
 * @throws WatchJobError when the API refuses (404 JOB_NOT_FOUND for another user's job, 401, 403); the abort
 *   reason when `signal` aborts.
 */
export async function watchJob(jobId: string, options: WatchJobOptions): Promise<WatchJobResult> {
  return new JobWatcher(jobId, options).run();
}

const RETRY_MS = [250, 500, 1_000, 2_000, 5_000];

class JobWatcher {
  private state = emptyReaderState();
  private live = false;
  private readNeeded = true;
  private wake: (() => void) | undefined;
  private quiet: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly jobId: string, private readonly o: WatchJobOptions) {}

  async run(): Promise<WatchJobResult> {
    const signal = this.o.signal;
    const onAbort = () => this.poke();
    signal?.addEventListener('abort', onAbort);
    let realtime: { client: RealtimeClient; own: boolean; subscription: RealtimeSubscription } | undefined;
    try {
      realtime = await this.subscribe();
      if (!realtime) this.o.onTransport?.('long-poll');
      await this.loop();
      return { status: this.state.status!, state: this.state };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      clearTimeout(this.quiet);
      realtime?.subscription.unsubscribe();
      if (realtime?.own) realtime.client.close();
    }
  }

  /** Reads the log whenever needed, long-polling while there is no live subscription, until a terminal status. */
  private async loop(): Promise<void> {
    for (let failures = 0; !this.state.terminal;) {
      this.o.signal?.throwIfAborted();
      if (this.live && !this.readNeeded) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      this.readNeeded = false;
      try {
        await this.readLog(this.live ? 0 : Math.min(20, Math.max(1, this.o.waitSeconds ?? 20)));
        failures = 0;
      } catch (err) {
        this.o.signal?.throwIfAborted();
        if (!(err instanceof WatchJobError) || !err.retryable) throw err;
        this.readNeeded = true;
        await this.pause(RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]!);
        failures += 1;
      }
    }
  }

  /** Reads pages after `lastSeq` until none has more (the first one held up to `wait` seconds). */
  private async readLog(wait: number): Promise<void> {
    for (let first = true; ; first = false) {
      const after = this.state.lastSeq;
      const page = await fetchStreamPage(this.o, this.jobId, after, first ? wait : 0, this.o.signal);
      this.apply(applyStreamPage(this.state, after, page), page.entries);
      if (!page.hasMore || this.state.terminal) return;
    }
  }

  /** The job's subscription, or undefined when there is no realtime push to use. */
  private async subscribe() {
    const target = await this.realtimeTarget();
    if (!target) return undefined;
    const own = !this.o.realtimeClient;
    const client = this.o.realtimeClient ?? createRealtimeClient({ httpEndpoint: target.httpEndpoint, getToken: () => this.o.getToken() });
    const subscription = client.subscribe(target.channel, {
      onSubscribed: () => this.goLive(),
      onPush: (push) => this.onPush(push.entries),
      onDisconnected: () => this.fallBack(),
      onError: (err) => {
        if (!err.retryable) this.fallBack(err);
      },
    });
    return { client, own, subscription };
  }

  private async realtimeTarget(): Promise<{ httpEndpoint: string; channel: string } | undefined> {
    const option = this.o.realtime ?? 'discover';
    if (option === false) return undefined;
    try {
      let target: RealtimeTarget | undefined = option === 'discover' ? undefined : option;
      if (!target) {
        const config = await fetchRealtimeConfig(this.o, this.o.signal);
        if (!config.available || !config.httpEndpoint) return undefined;
        target = { httpEndpoint: config.httpEndpoint, ownerSegment: config.ownerSegment };
      }
      const owner = this.o.owner !== undefined ? await ownerSegmentOf(this.o.owner) : target.ownerSegment;
      return owner ? { httpEndpoint: target.httpEndpoint, channel: `/jobs/${owner}/${this.jobId}` } : undefined;
    } catch (err) {
      this.o.signal?.throwIfAborted();
      if (err instanceof WatchJobError && !err.retryable) throw err;
      return undefined; // no realtime this time: the log alone
    }
  }

  private goLive(): void {
    this.live = true;
    this.o.onTransport?.('realtime');
    this.needRead(); // what was committed before the subscription took effect
  }

  private fallBack(reason?: RealtimeError): void {
    if (!this.live && !reason) return;
    this.live = false;
    clearTimeout(this.quiet);
    this.o.onTransport?.('long-poll', reason);
    this.poke();
  }

  private onPush(entries: StreamEntry[]): void {
    this.apply(applyStreamEntries(this.state, entries), entries);
    if (this.state.backfillFrom !== undefined) this.needRead();
    else this.armQuietTimer();
  }

  private needRead(): void {
    this.readNeeded = true;
    this.armQuietTimer();
    this.poke();
  }

  private armQuietTimer(): void {
    clearTimeout(this.quiet);
    if (this.live && !this.state.terminal) this.quiet = setTimeout(() => this.needRead(), this.o.quietResyncMs ?? 15_000);
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.o.signal?.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
    });
  }

  /** Moves to `next` and tells the handlers what was applied, in `seq` order. */
  private apply(next: StreamReaderState, arrived: readonly StreamEntry[]): void {
    const previous = this.state;
    this.state = next;
    if (next.lastSeq === previous.lastSeq) return;
    emitApplied(previous, next, arrived, this.o);
    this.o.onChange?.(next);
    if (next.terminal) this.poke();
  }
}

/**
 * Calls the handlers for the entries between `previous.lastSeq` and `next.lastSeq`, by the reader's rules: a
 * `running` status or a newer attempt's entry starts a segment (`onAttempt`); an older attempt's preview is stale.
 */
function emitApplied(previous: StreamReaderState, next: StreamReaderState, arrived: readonly StreamEntry[], h: WatchJobHandlers): void {
  const bySeq = new Map<number, StreamEntry>();
  for (const e of [...previous.held, ...arrived]) bySeq.set(e.seq, e);
  let attempt = previous.attempt;
  for (let seq = previous.lastSeq + 1; seq <= next.lastSeq; seq += 1) {
    const e = bySeq.get(seq);
    if (!e) continue; // a seq retention removed (the page said so)
    if (e.type === 'status') {
      if (e.status === 'running') {
        attempt = Math.max(attempt, e.attempt);
        h.onAttempt?.(e.attempt);
      }
      h.onStatus?.(e);
      continue;
    }
    if (e.attempt < attempt) continue;
    if (e.attempt > attempt) {
      attempt = e.attempt;
      h.onAttempt?.(attempt);
    }
    if (e.type === 'text') h.onText?.(e.delta, e.field);
    else h.onItem?.(e.item, e.index, e.field);
  }
}
