/**
 * The reader state (lib/stream/reader-state.ts), by property: whatever pushes arrive — repeated, reordered,
 * missing — and whatever backfill pages a reader asks for when it sees a gap, what it shows is at every moment
 * exactly the log up to its `lastSeq`, and at the end exactly the whole log.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyStreamEntries, applyStreamPage, emptyReaderState, type StreamReaderState } from '../../lib/stream/reader-state.ts';
import { streamEntrySchema, type StatusEntry, type StreamEntry } from '../../lib/stream/protocol.ts';

const AT = '2026-12-05T10:00:00.000Z';
type Chunk = { type: 'text'; field: string; delta: string } | { type: 'item'; field: string; index: number; item: unknown };

const chunkArb: fc.Arbitrary<Chunk> = fc.oneof(
  fc.record({ type: fc.constant('text' as const), field: fc.constantFrom('feedback', 'summary'), delta: fc.string({ maxLength: 5 }) }),
  fc.record({ type: fc.constant('item' as const), field: fc.constant('questions'), index: fc.nat(3), item: fc.record({ q: fc.string({ maxLength: 3 }) }) }),
);
const segmentArb = fc.record({ chunks: fc.array(chunkArb, { maxLength: 8 }), retried: fc.boolean(), refunded: fc.boolean() });

/** A log as the server writes one: queued, then attempts (each a running entry and its chunks), maybe an end. */
const logArb = fc.record({
  segments: fc.array(segmentArb, { maxLength: 4 }),
  end: fc.constantFrom(undefined, 'succeeded', 'failed', 'cancelled'),
}).map(({ segments, end }) => {
  const log: StreamEntry[] = [];
  const push = (e: Record<string, unknown>) => log.push(streamEntrySchema.parse({ ...e, seq: log.length + 1, at: AT }));
  push({ type: 'status', status: 'queued', attempt: 0 });
  let attempt = 0;
  let refundNext = false;
  for (const s of segments) {
    attempt = refundNext ? attempt : attempt + 1; // a refunded attempt's number is used again
    push({ type: 'status', status: 'running', attempt });
    for (const c of s.chunks) push({ ...c, attempt });
    refundNext = s.retried && s.refunded;
    if (s.retried) push({ type: 'status', status: 'queued', attempt: refundNext ? attempt - 1 : attempt, retryAt: AT, error: { code: 'X', message: 'x' } });
  }
  if (end) push({ type: 'status', status: end, attempt, ...(end === 'failed' ? { error: { code: 'X', message: 'x' } } : {}) });
  return log;
});

/** What the first `n` entries of `log` show, said independently of the reader: the last segment's previews. */
function expectedView(log: readonly StreamEntry[], n: number) {
  const prefix = log.slice(0, n);
  const lastRunning = prefix.findLastIndex((e) => e.type === 'status' && e.status === 'running');
  const text: Record<string, string> = {};
  const items: Record<string, unknown[]> = {};
  for (const e of prefix.slice(lastRunning + 1)) {
    if (e.type === 'text') text[e.field] = (text[e.field] ?? '') + e.delta;
    if (e.type === 'item') (items[e.field] ??= [])[e.index] = e.item;
  }
  const status = prefix.findLast((e): e is StatusEntry => e.type === 'status');
  return { lastSeq: n, status, text, items: Object.fromEntries(Object.entries(items).map(([k, v]) => [k, [...v]])) };
}

function shown(state: StreamReaderState) {
  return { lastSeq: state.lastSeq, status: state.status, text: state.text, items: state.items };
}

/** A delivery step: a push of one entry of the log, or a backfill page (what GET …/stream?after=lastSeq returns). */
type Step = { push: number } | { backfill: number };
const stepsArb = (n: number): fc.Arbitrary<Step[]> => fc.array(
  fc.oneof({ weight: 4, arbitrary: fc.nat(Math.max(0, n - 1)).map((push) => ({ push })) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }).map((backfill) => ({ backfill })) }),
  { maxLength: 3 * n + 5 },
);

describe('the reader state', () => {
  it('shows exactly the log, whatever the order, repetition and loss of pushes and the backfills after gaps', () => {
    fc.assert(fc.property(logArb.chain((log) => fc.tuple(fc.constant(log), stepsArb(log.length), fc.integer({ min: 1, max: 5 }))), ([log, steps, pageSize]) => {
      let state = emptyReaderState();
      const page = (s: StreamReaderState, size: number) => {
        const entries = log.filter((e) => e.seq > s.lastSeq).slice(0, size);
        return { entries, lastSeq: log.length, hasMore: (entries.at(-1)?.seq ?? s.lastSeq) < log.length };
      };
      for (const step of steps) {
        state = 'push' in step ? applyStreamEntries(state, [log[step.push]!]) : applyStreamPage(state, state.lastSeq, page(state, step.backfill));
        expect(shown(state)).toEqual(expectedView(log, state.lastSeq));
        // A gap is reported exactly while entries past it are held.
        expect(state.backfillFrom).toBe(state.held.length > 0 ? state.lastSeq : undefined);
        expect(state.held.every((e) => e.seq > state.lastSeq + 1)).toBe(true);
      }
      // The reader backfills from where it is until the log is read.
      for (let guard = 0; state.lastSeq < log.length && guard <= log.length; guard += 1) state = applyStreamPage(state, state.lastSeq, page(state, pageSize));
      expect(shown(state)).toEqual(expectedView(log, log.length));
      expect(state.held).toEqual([]);
      expect(state.terminal).toBe(['succeeded', 'failed', 'cancelled'].includes((log.at(-1) as StatusEntry | undefined)?.status ?? ''));
    }), { numRuns: 300 });
  });

  it('drops the text of an attempt once a new one starts, and ignores a late preview of the old one', () => {
    const e = (seq: number, rest: Record<string, unknown>) => streamEntrySchema.parse({ seq, at: AT, ...rest });
    let state = applyStreamEntries(emptyReaderState(), [
      e(1, { type: 'status', status: 'queued', attempt: 0 }), e(2, { type: 'status', status: 'running', attempt: 1 }),
      e(3, { type: 'text', field: 'feedback', delta: 'first try', attempt: 1 }), e(4, { type: 'status', status: 'running', attempt: 2 }),
    ]);
    expect(state.text).toEqual({});
    state = applyStreamEntries(state, [e(5, { type: 'text', field: 'feedback', delta: 'late', attempt: 1 }), e(6, { type: 'text', field: 'feedback', delta: 'second', attempt: 2 })]);
    expect(state.text).toEqual({ feedback: 'second' });
    expect(state).toMatchObject({ lastSeq: 6, attempt: 2, backfillFrom: undefined });
  });

  it('holds entries past a gap and asks for a backfill from the last one it applied', () => {
    const e = (seq: number) => streamEntrySchema.parse({ seq, at: AT, type: 'text', field: 'f', delta: String(seq), attempt: 0 });
    let state = applyStreamEntries(emptyReaderState(), [e(1), e(2), e(5), e(4)]);
    expect(state).toMatchObject({ lastSeq: 2, backfillFrom: 2, text: { f: '12' } });
    state = applyStreamEntries(state, [e(3), e(4)]);
    expect(state).toMatchObject({ lastSeq: 5, backfillFrom: undefined, held: [], text: { f: '12345' } });
  });

  it('steps over the seqs a finished job\'s page says are gone (chunks deleted by retention), and holds nothing', () => {
    const e = (seq: number, rest: Record<string, unknown>) => streamEntrySchema.parse({ seq, at: AT, attempt: 1, ...rest });
    // A push of seq 3 arrived before retention deleted seqs 3-4; the final page of the finished job has 1, 2 and 5.
    let state = applyStreamEntries(emptyReaderState(), [e(3, { type: 'text', field: 'f', delta: 'gone' })]);
    expect(state.backfillFrom).toBe(0);
    state = applyStreamPage(state, 0, {
      entries: [e(1, { type: 'status', status: 'queued', attempt: 0 }), e(2, { type: 'status', status: 'running' }), e(5, { type: 'status', status: 'succeeded', resultUrl: '/r' })],
      lastSeq: 5, hasMore: false,
    });
    expect(state).toMatchObject({ lastSeq: 5, held: [], backfillFrom: undefined, terminal: true, status: { status: 'succeeded' } });
    // A page asked from further on than the reader is says nothing of what lies before it.
    const ahead = applyStreamPage(emptyReaderState(), 3, { entries: [e(5, { type: 'status', status: 'cancelled' })], lastSeq: 5, hasMore: false });
    expect(ahead).toMatchObject({ lastSeq: 0, backfillFrom: 0 });
  });
});
