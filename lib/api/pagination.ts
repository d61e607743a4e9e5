/**
 * Keyset pagination over job ids. Ids are ULIDs, so ordering by id descending is newest first and a page
 * continues strictly below the last id it returned. The cursor is that id, versioned and base64url-encoded:
 * opaque to clients, so the scheme can change without breaking them.
 */
import { ULID_PATTERN } from '../db/ids.ts';

const PREFIX = 'v1:';

export interface Page<T> {
  items: T[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** The cursor that continues after `lastId`. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(`${PREFIX}${lastId}`, 'utf8').toString('base64url');
}

/** The id a cursor continues after, or null when `cursor` is not one this API issued. */
export function decodeCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(PREFIX)) return null;
  const id = text.slice(PREFIX.length);
  return ULID_PATTERN.test(id) ? id : null;
}

/**
 * A page from rows fetched with `take: limit + 1`: the extra row only tells that more exist.
 * `rows` must be ordered by id descending.
 */
export function toPage<R extends { id: string }, T>(rows: readonly R[], limit: number, view: (row: R) => T): Page<T> {
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return { items: pageRows.map(view), nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}
