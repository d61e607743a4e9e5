/**
 * Canonical JSON and the hashes built on it (`AiJob.inputHash`, `AiJobSnapshot.contentHash`,
 * `AiJob.outputHash`). Two values that are equal as JSON always give the same text, whatever their key
 * order, so their hashes can be compared across processes and releases.
 *
 * Rules: object keys sorted by UTF-16 code units, recursively; arrays keep their order; no whitespace;
 * strings and numbers written as `JSON.stringify` writes them (so `-0` becomes `0`). For the values it
 * accepts this matches RFC 8785 (JCS). Object properties whose value is `undefined` are omitted, as in
 * the stored JSON column. Anything else that is not plain JSON is refused with a typed error rather than
 * silently changed: `undefined` elsewhere, functions, symbols, bigints, NaN and ±Infinity, class
 * instances (including `Date`, `Map`), circular references, nesting beyond {@link MAX_CANONICAL_DEPTH}.
 */
import { createHash } from 'node:crypto';
import { CanonicalJsonError, formatPath } from './errors.ts';

/** Deepest nesting accepted; far beyond any job input (the snapshot redactor stops at 32). */
export const MAX_CANONICAL_DEPTH = 64;

/**
 * The canonical JSON text of `value`.
 * @throws CanonicalJsonError naming the path and kind of the first unsupported value
 */
export function canonicalJson(value: unknown): string {
  return write(value, [], new Set());
}

/** SHA-256 of the UTF-8 bytes of `text`, as 64 lower-case hex characters. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * `sha256Hex(canonicalJson(value))`: the content hash of a JSON value.
 * @throws CanonicalJsonError as {@link canonicalJson}
 */
export function hashCanonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

function write(value: unknown, path: PropertyKey[], ancestors: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError('non-finite number', formatPath(path));
      return JSON.stringify(value);
    case 'object':
      return value === null ? 'null' : writeContainer(value, path, ancestors);
    case 'undefined':
    case 'function':
    case 'symbol':
    case 'bigint':
      throw new CanonicalJsonError(typeof value as 'undefined' | 'function' | 'symbol' | 'bigint', formatPath(path));
  }
}

function writeContainer(value: object, path: PropertyKey[], ancestors: Set<object>): string {
  if (path.length >= MAX_CANONICAL_DEPTH) throw new CanonicalJsonError('too deep', formatPath(path));
  if (ancestors.has(value)) throw new CanonicalJsonError('circular reference', formatPath(path));
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      // Array.from visits holes as undefined, so a sparse array is refused rather than written as `[,1]`.
      return `[${Array.from(value, (item: unknown, i) => write(item, [...path, i], ancestors)).join(',')}]`;
    }
    if (!isPlainObject(value)) throw new CanonicalJsonError('non-plain object', formatPath(path));
    const record = value as Record<string, unknown>;
    const members: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const member = record[key];
      if (member === undefined) continue;
      members.push(`${JSON.stringify(key)}:${write(member, [...path, key], ancestors)}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    ancestors.delete(value);
  }
}

/** An object literal, `JSON.parse` result or `Object.create(null)`; not a class instance. */
export function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
