/**
 * Keyset pagination over jobs, newest first: ordered by (createdAt DESC, id DESC), a page continues strictly
 * after the last (createdAt, id) it returned. Every list filter has an index ending in createdAt (InnoDB appends
 * the id), so a page is read in index order and stops at its size (docs/data-at-scale.md).
 * The cursor is that position, versioned and base64url-encoded: opaque to clients, so the scheme can change
 * without breaking them. `v1` cursors (the id alone, when lists were ordered by id) are refused as unknown.
 */
import { ULID_PATTERN } from '../db/ids.ts';

const PREFIX = 'v2:';

export interface Page<T> {
  items: T[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** Where a page ends: the last row's creation time (milliseconds, as stored) and id. */
export interface PagePosition {
  createdAt: Date;
  id: string;
}

/** The cursor that continues after `last`. */
export function encodeCursor(last: PagePosition): string {
  return Buffer.from(`${PREFIX}${last.createdAt.getTime()}:${last.id}`, 'utf8').toString('base64url');
}

/** The position a cursor continues after, or null when `cursor` is not one this API issued. */
export function decodeCursor(cursor: string): PagePosition | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const match = /^v2:(\d{1,15}):(.+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) return null;
  const createdAt = new Date(Number(match[1]));
  const id = match[2] as string;
  return ULID_PATTERN.test(id) && !Number.isNaN(createdAt.getTime()) ? { createdAt, id } : null;
}

/**
 * A page from the rows of ids fetched with `take: limit + 1`: the extra id only tells that more exist.
 * `rows` must be ordered by (createdAt, id) descending.
 */
export function toPage<R extends PagePosition, T>(rows: readonly R[], idsFetched: number, limit: number, view: (row: R) => T): Page<T> {
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return { items: pageRows.map(view), nextCursor: idsFetched > limit && last ? encodeCursor(last) : null };
}
