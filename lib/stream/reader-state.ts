/**
 * What a reader of a job's stream log shows, built from entries however they arrive (docs/streaming.md,
 * "Reading the log"): pushes may come twice, out of order or not at all, pages of a backfill overlap them. Pure
 * — no I/O, no clock, no Node API — so the same code runs in Node (the CLI) and the browser (the console).
 *
 * Rules (./protocol.ts):
 * - entries apply in `seq` order, each once: one at or below `lastSeq` is a duplicate and ignored;
 * - an entry past `lastSeq + 1` is held until the gap is filled, and `backfillFrom` says to read the log after
 *   `lastSeq` (GET …/stream?after=`backfillFrom`) — whatever a push missed, the backfill brings
 *   ({@link applyStreamPage}: a page also says which `seq`s are gone for good);
 * - a `running` status entry starts a new segment (a new attempt): the text and items shown so far are dropped;
 *   text and items of an attempt older than the newest one seen are ignored.
 */
import type { StatusEntry, StreamEntry, StreamPage } from './protocol.ts';

export interface StreamReaderState {
  /** The highest `seq` applied: every entry up to it was applied once, in order. */
  readonly lastSeq: number;
  /** The latest status entry applied. */
  readonly status: StatusEntry | undefined;
  /** The newest attempt seen. */
  readonly attempt: number;
  /** Text per output field, of the current segment. */
  readonly text: Readonly<Record<string, string>>;
  /** Items per array field of the output, by index, of the current segment (an index not seen yet is a hole). */
  readonly items: Readonly<Record<string, readonly unknown[]>>;
  /** Entries received past a gap, waiting for it to be filled (sorted by `seq`). */
  readonly held: readonly StreamEntry[];
  /** Set while entries are held past a gap: read the log after this `seq` to fill it. */
  readonly backfillFrom: number | undefined;
  /** A terminal status was applied: nothing more will come. */
  readonly terminal: boolean;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Nothing read yet (a reader that holds no position starts from `after=0`). */
export function emptyReaderState(): StreamReaderState {
  return { lastSeq: 0, status: undefined, attempt: 0, text: {}, items: {}, held: [], backfillFrom: undefined, terminal: false };
}

/** `state` with `entries` applied (any order, duplicates allowed: pushes); `state` itself is not changed. */
export function applyStreamEntries(state: StreamReaderState, entries: readonly StreamEntry[]): StreamReaderState {
  return applyUpTo(state, entries, 0);
}

/**
 * `state` with a page of the read API applied: `GET …/stream?after=<after>` answered `page`. A page holds every
 * entry between `after` and its last one (and, when nothing more follows it, up to its `lastSeq`): a `seq` missing
 * in that range is one retention deleted from a finished job's log (docs/streaming.md), and is stepped over.
 */
export function applyStreamPage(state: StreamReaderState, after: number, page: Pick<StreamPage, 'entries' | 'lastSeq' | 'hasMore'>): StreamReaderState {
  if (after > state.lastSeq) return applyStreamEntries(state, page.entries);
  const last = page.entries.at(-1)?.seq ?? after;
  return applyUpTo(state, page.entries, page.hasMore ? last : Math.max(last, page.lastSeq));
}

/** Applies what follows `lastSeq` in order; a `seq` up to `complete` that is not there is stepped over. */
function applyUpTo(state: StreamReaderState, entries: readonly StreamEntry[], complete: number): StreamReaderState {
  const waiting = new Map<number, StreamEntry>();
  for (const e of [...state.held, ...entries]) if (e.seq > state.lastSeq && !waiting.has(e.seq)) waiting.set(e.seq, e);
  const view = { ...state, text: { ...state.text }, items: { ...state.items } } as Mutable;
  for (let seq = view.lastSeq + 1; waiting.has(seq) || seq <= complete; seq = view.lastSeq + 1) {
    const next = waiting.get(seq);
    if (next) {
      waiting.delete(seq);
      apply(view, next);
    }
    view.lastSeq = seq;
  }
  view.held = [...waiting.values()].sort((a, b) => a.seq - b.seq);
  view.backfillFrom = view.held.length > 0 ? view.lastSeq : undefined;
  return view;
}

type Mutable = { -readonly [K in keyof StreamReaderState]: StreamReaderState[K] } & {
  text: Record<string, string>;
  items: Record<string, unknown[]>;
};

function apply(view: Mutable, e: StreamEntry): void {
  if (e.type === 'status') {
    view.status = e;
    view.terminal = TERMINAL.has(e.status);
    if (e.status === 'running') newSegment(view, e.attempt);
    return;
  }
  if (e.attempt < view.attempt) return; // an older attempt's preview: stale
  if (e.attempt > view.attempt) newSegment(view, e.attempt);
  if (e.type === 'text') {
    view.text[e.field] = (view.text[e.field] ?? '') + e.delta;
    return;
  }
  const list = [...(view.items[e.field] ?? [])];
  list[e.index] = e.item;
  view.items[e.field] = list;
}

function newSegment(view: Mutable, attempt: number): void {
  view.attempt = Math.max(view.attempt, attempt);
  view.text = {};
  view.items = {};
}
