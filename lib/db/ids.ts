import { monotonicFactory } from 'ulid';

const nextUlid = monotonicFactory();

/**
 * A new primary key: a ULID, 26 characters, lexicographically sortable by creation time
 * (monotonic within one process), so `ORDER BY id` is creation order and cursors can use it.
 */
export function newId(): string {
  return nextUlid();
}

/** ULID syntax (Crockford base32); used to validate ids before any query. */
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
