/**
 * The text rule at the API boundary: every string a request carries (body keys and values, query parameters,
 * path parameters, headers we read, the token subject) must be well-formed UTF-16, i.e. valid Unicode with no
 * lone surrogate. MySQL stores Unicode scalar values only; the mariadb driver encodes a lone surrogate as `?`
 * (silently merging distinct strings) and MariaDB's JSON_VALID refuses `\ud800` escapes. Everything else —
 * U+0000, noncharacters such as U+FFFF, 4-byte characters, combining and bidirectional marks — is valid
 * Unicode and round-trips exactly (utf8mb4 everywhere). See docs/security.md "Text".
 */
import type { IssueDetail } from '../jobs/errors.ts';

/** True when `text` has no lone surrogate. */
export function isWellFormedText(text: string): boolean {
  return text.isWellFormed();
}

/**
 * The first ill-formed string in a JSON value (keys included), as a field path (`input.items.0`), or undefined.
 * Depth-first, iterative: a deeply nested body cannot overflow the stack.
 */
export function findIllFormedText(value: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return path;
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ value: item, path: join(path, String(i)) }));
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        if (!key.isWellFormed()) return path;
        stack.push({ value: item, path: join(path, key) });
      }
    }
  }
  return undefined;
}

/** The issue for an ill-formed string found at `path` under `location` (`body`, `query`, `path`, `header`). */
export function illFormedIssue(location: string, path: string): IssueDetail {
  return { path: path ? `${location}.${path}` : location, message: 'must be well-formed Unicode (no unpaired surrogate)' };
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
