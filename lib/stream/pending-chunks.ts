/**
 * The appender's buffer (./attempt-appender.ts): previews not yet appended, coalesced — consecutive text of one
 * field is one chunk, up to {@link MAX_CHUNK_BYTES} — and cut into batches of at most a given size. Pure: no I/O,
 * no clock (the caller passes the time).
 */
import type { ChunkRow } from './chunk-append.ts';
import type { PreviewEvent, StreamEntry } from './protocol.ts';

/** Bytes of content one text chunk holds at most (a longer delta continues in the next chunk). */
export const MAX_CHUNK_BYTES = 4_000;
/** An item whose JSON is longer is not stored (the column holds 64 KB; no output item comes near). */
export const MAX_ITEM_BYTES = 60_000;

/** Characters the driver escapes in a quoted value (each costs one more byte in the statement text). */
const ESCAPED = /[\\'"\0]/g;

/** Bytes `text` adds to a statement's text as a quoted value. */
export function sentBytes(text: string): number {
  return Buffer.byteLength(text) + (text.match(ESCAPED)?.length ?? 0);
}

interface PendingChunk {
  type: 'text' | 'item';
  field: string;
  index: number | null;
  content: string;
  bytes: number;
  item?: unknown;
}

export interface PendingChunks {
  /** Buffers a preview; false when it is an item too large to store (dropped). */
  add(event: PreviewEvent, now: number): boolean;
  isEmpty(): boolean;
  /** Characters buffered: text, plus items as JSON. */
  chars(): number;
  /** When the oldest buffered preview arrived (epoch ms). */
  since(): number;
  clear(): void;
  /** Removes and returns chunks from the front, at least one, while their bytes stay within `maxBytes`. */
  shift(maxBytes: number): PendingChunk[];
  /** Whether one {@link shift} of `maxBytes` would take everything buffered. */
  fitsOneBatch(maxBytes: number): boolean;
}

export function pendingChunks(): PendingChunks {
  let list: PendingChunk[] = [];
  let chars = 0;
  let since = 0;
  const addText = (field: string, delta: string): void => {
    for (const piece of splitByBytes(delta, MAX_CHUNK_BYTES)) {
      const last = list.at(-1);
      const bytes = sentBytes(piece);
      if (last?.type === 'text' && last.field === field && last.bytes + bytes <= MAX_CHUNK_BYTES) {
        last.content += piece;
        last.bytes += bytes;
      } else {
        list.push({ type: 'text', field, index: null, content: piece, bytes });
      }
      chars += piece.length;
    }
  };
  return {
    add(event, now) {
      if (list.length === 0) since = now;
      if (event.type === 'text') {
        if (event.delta.length > 0) addText(event.field, event.delta);
        return true;
      }
      const content = JSON.stringify(event.item ?? null);
      const bytes = sentBytes(content);
      if (bytes > MAX_ITEM_BYTES) return false;
      list.push({ type: 'item', field: event.field, index: event.index, content, bytes, item: event.item ?? null });
      chars += content.length;
      return true;
    },
    isEmpty: () => list.length === 0,
    chars: () => chars,
    since: () => since,
    clear() {
      list = [];
      chars = 0;
    },
    fitsOneBatch(maxBytes) {
      return list.length <= 1 || list.reduce((sum, c) => sum + c.bytes, 0) <= maxBytes;
    },
    shift(maxBytes) {
      let bytes = 0;
      let n = 0;
      while (n < list.length && (n === 0 || bytes + list[n]!.bytes <= maxBytes)) bytes += list[n++]!.bytes;
      const taken = list.slice(0, n);
      list = list.slice(n);
      chars -= taken.reduce((sum, c) => sum + c.content.length, 0);
      return taken;
    },
  };
}

/** What one append writes and then publishes: its rows (`seq` from `firstSeq`), their entries, and its time. */
export interface Batch {
  rows: ChunkRow[];
  entries: StreamEntry[];
  at: Date;
}

/** The next batch from `pending` (at most `maxBytes` of content, at least one chunk), or undefined when empty. */
export function takeBatch(pending: PendingChunks, firstSeq: number, attempt: number, at: Date, maxBytes: number): Batch | undefined {
  const chunks = pending.shift(maxBytes);
  if (chunks.length === 0) return undefined;
  const iso = at.toISOString();
  const rows = chunks.map((c, i): ChunkRow => ({ seq: firstSeq + i, type: c.type, field: c.field, itemIndex: c.index, content: c.content }));
  const entries = chunks.map((c, i): StreamEntry => (c.type === 'text'
    ? { seq: firstSeq + i, attempt, at: iso, type: 'text', field: c.field, delta: c.content }
    : { seq: firstSeq + i, attempt, at: iso, type: 'item', field: c.field, index: c.index ?? 0, item: c.item }));
  return { rows, entries, at };
}

/** `text` in pieces of at most `maxBytes` (as {@link sentBytes} counts), never splitting a code point. */
export function splitByBytes(text: string, maxBytes: number): string[] {
  if (sentBytes(text) <= maxBytes) return [text];
  const pieces: string[] = [];
  let piece = '';
  let bytes = 0;
  for (const ch of text) {
    const b = sentBytes(ch);
    if (bytes + b > maxBytes && piece) {
      pieces.push(piece);
      piece = '';
      bytes = 0;
    }
    piece += ch;
    bytes += b;
  }
  if (piece) pieces.push(piece);
  return pieces;
}
