/**
 * What `watchJob` told a watcher, recorded: the text per field as a person would see it (reset on every new
 * attempt), items, statuses, attempts and transports in order; plus a realtime client that counts (and may
 * perturb) the pushes it delivers, for tests of lost and repeated pushes.
 */
import { createRealtimeClient, type RealtimeClient, type SubscriptionHandlers } from '../../lib/client/realtime-client.ts';
import { watchJob, type WatchJobOptions, type WatchJobResult } from '../../lib/client/watch-job.ts';
import type { StatusEntry, StreamPush } from '../../lib/stream/protocol.ts';
import type { E2e } from './e2e-runtime.ts';

export interface WatchRecord {
  /** Text per field since the last `onAttempt`. */
  text: Record<string, string>;
  /** Every delta received, across attempts, in order. */
  deltas: string[];
  items: Record<string, unknown[]>;
  statuses: StatusEntry[];
  attempts: number[];
  transports: string[];
  /** Text shown before each `onAttempt` (what the watcher was told to discard), in order. */
  discarded: string[];
}

/** Handlers that record into a fresh {@link WatchRecord}; `onEvent` runs after each one (tests wait on it). */
export function recorder(onEvent: () => void = () => undefined): { record: WatchRecord; handlers: Partial<WatchJobOptions> } {
  const record: WatchRecord = { text: {}, deltas: [], items: {}, statuses: [], attempts: [], transports: [], discarded: [] };
  const handlers: Partial<WatchJobOptions> = {
    onText: (delta, field) => { record.text[field] = (record.text[field] ?? '') + delta; record.deltas.push(delta); onEvent(); },
    onItem: (item, index, field) => { (record.items[field] ??= [])[index] = item; onEvent(); },
    onStatus: (status) => { record.statuses.push(status); onEvent(); },
    onAttempt: (attempt) => {
      record.discarded.push(Object.values(record.text).join(''));
      record.text = {};
      record.items = {};
      record.attempts.push(attempt);
      onEvent();
    },
    onTransport: (transport) => { record.transports.push(transport); onEvent(); },
  };
  return { record, handlers };
}

/** Watches `jobId` on the runtime as `token`'s user with recording handlers (and `extra` options). */
export function watchOnRuntime(e: E2e, jobId: string, token: string, extra: Partial<WatchJobOptions> = {}, onEvent?: () => void): { record: WatchRecord; done: Promise<WatchJobResult> } {
  const { record, handlers } = recorder(onEvent);
  const done = watchJob(jobId, { apiUrl: e.runtime.url, getToken: () => token, ...handlers, ...extra });
  return { record, done };
}

/** Resolves when `condition` holds; checked whenever `tick` is called (pass `tick` as a watcher's onEvent). */
export function condition(): { tick(): void; until(check: () => boolean, what: string, timeoutMs?: number): Promise<void> } {
  const waiters = new Set<() => void>();
  return {
    tick: () => { for (const w of [...waiters]) w(); },
    until: (check, what, timeoutMs = 30_000) => new Promise<void>((resolve, reject) => {
      if (check()) return resolve();
      const timer = setTimeout(() => { waiters.delete(probe); reject(new Error(`timed out waiting for ${what}`)); }, timeoutMs);
      const probe = () => {
        if (!check()) return;
        clearTimeout(timer);
        waiters.delete(probe);
        resolve();
      };
      waiters.add(probe);
    }),
  };
}

/**
 * A realtime client whose subscriptions see `perturb(push, n)` (n: 0-based push count) instead of each push:
 * `[]` loses it, `[push, push]` repeats it. Counts what the hub delivered.
 */
export function perturbingClient(httpEndpoint: string, getToken: () => string, perturb: (push: StreamPush, n: number) => StreamPush[]): RealtimeClient & { delivered(): number } {
  const inner = createRealtimeClient({ httpEndpoint, getToken });
  let n = 0;
  return {
    delivered: () => n,
    close: () => inner.close(),
    subscribe: (channel: string, handlers: SubscriptionHandlers) => inner.subscribe(channel, {
      ...handlers,
      onPush: (push) => {
        for (const p of perturb(push, n++)) handlers.onPush(structuredClone(p));
      },
    }),
  };
}
