/**
 * Snapshot redaction (ADR-003 §8.4): the job input stored in `AiJobSnapshot.content` must not hold
 * credentials. Two rules, applied to a deep copy (the input is never mutated):
 *
 * 1. Sensitive field names. The name is split into words (camelCase, snake_case, kebab-case, any case):
 *    - any word is `password`, `passwd`, `passphrase`, `pwd` or `secret`(s) (`passwordHash`, `clientSecret`);
 *    - the last word is `token`, `auth`, `authorization`, `credential`(s), `cookie`, or a run-together form
 *      such as `apikey`, `accesstoken` (`accessToken`, `refresh_token`, `Authorization`, `credentials`);
 *    - the last word is `key` (`key`, `apiKey`, `private_key`, `X-Api-Key`) unless the word before it
 *      names a harmless kind of key in {@link HARMLESS_KEY_QUALIFIERS} (`idempotencyKey`, `cacheKey`).
 *    Names merely containing these letters are kept: `keyword`, `keys`, `maxTokens`, `tokenCount`,
 *    `credentialId`. The whole value becomes `[REDACTED]`; `null` and `undefined` are kept (nothing to hide).
 * 2. Secret-shaped text inside any string, replaced in place: `sk-…` API keys (OpenAI, DeepSeek), JWTs,
 *    `Bearer <token>` (the scheme word is kept), AWS access key ids (`AKIA…`, `ASIA…`).
 *
 * Changing these rules changes what is stored: bump {@link REDACTION_VERSION} so old snapshots can be told apart,
 * and keep {@link redactionSafePrefixLength} (what streamed text may show before the rest is known) true to them.
 */
import { isPlainObject } from './canonical-json.ts';
import { CanonicalJsonError, SnapshotLimitError, formatPath } from './errors.ts';

/** Version of the rules above, stored as `AiJobSnapshot.redactionVersion`. */
export const REDACTION_VERSION = 1;

/** What a redacted value or secret becomes. */
export const REDACTED = '[REDACTED]';

/** Deepest container nesting accepted (the root object is level 1). */
export const MAX_SNAPSHOT_DEPTH = 32;

/** Most values (containers and leaves) one snapshot may hold. */
export const MAX_SNAPSHOT_NODES = 100_000;

/** Words before `key` that name something that is not a secret. */
export const HARMLESS_KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  'idempotency', 'dedupe', 'dedup', 'deduplication', 'cache', 'prompt', 'projector', 'sort', 'partition',
  'hash', 'range', 'primary', 'foreign', 'unique', 'composite', 'object', 's3', 'routing', 'lookup',
  'translation', 'i18n', 'message', 'group', 'public',
]);

const SECRET_ANYWHERE = new Set(['password', 'passwords', 'passwd', 'passphrase', 'pwd', 'secret', 'secrets']);
const SECRET_LAST = new Set([
  'token', 'auth', 'authorization', 'credential', 'credentials', 'cookie',
  'apikey', 'privatekey', 'secretkey', 'accesskey', 'accesstoken', 'refreshtoken', 'authtoken', 'idtoken',
]);

/** Secret shapes found inside strings. Each is global; `replacement` may refer to capture groups. */
const SECRET_PATTERNS: readonly { pattern: RegExp; replacement: string }[] = [
  // Before the others, so a bearer JWT or sk- key is replaced whole. Scheme is case-insensitive (RFC 9110).
  { pattern: /\b(bearer)\s+[A-Za-z0-9._~+/-]{16,}=*/gi, replacement: `$1 ${REDACTED}` },
  { pattern: /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g, replacement: REDACTED },
  { pattern: /\bsk-[A-Za-z0-9_-]{16,}/g, replacement: REDACTED },
  { pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, replacement: REDACTED },
];

/** A redacted copy of a snapshot and what was done to it. */
export interface RedactionResult {
  content: unknown;
  redactionVersion: number;
  /** Paths (see `formatPath`) of every value replaced or changed, in traversal order. */
  redactedPaths: string[];
}

interface WalkState {
  nodes: number;
  redactedPaths: string[];
}

/**
 * Redacts `value` by the rules above into a fresh copy; `value` is not touched.
 * Leaves other than strings are copied as they are (canonical JSON refuses the non-JSON ones later).
 * @throws SnapshotLimitError beyond {@link MAX_SNAPSHOT_DEPTH} levels or {@link MAX_SNAPSHOT_NODES} values
 * @throws CanonicalJsonError for class instances (`Date`, `Map`, …), whose contents cannot be inspected
 */
export function redactSnapshot(value: unknown): RedactionResult {
  const state: WalkState = { nodes: 0, redactedPaths: [] };
  const content = redactValue(value, [], state);
  return { content, redactionVersion: REDACTION_VERSION, redactedPaths: state.redactedPaths };
}

/** Whether a field of this name holds a secret (rule 1). */
export function isSensitiveKey(name: string): boolean {
  const words = splitWords(name);
  const last = words.at(-1);
  if (last === undefined) return false;
  if (words.some((w) => SECRET_ANYWHERE.has(w)) || SECRET_LAST.has(last)) return true;
  if (last !== 'key') return false;
  const qualifier = words.at(-2);
  return qualifier === undefined || !HARMLESS_KEY_QUALIFIERS.has(qualifier);
}

/** `text` with every secret-shaped substring replaced (rule 2). */
export function redactText(text: string): string {
  let out = text;
  for (const { pattern, replacement } of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/**
 * Characters a rule-2 match can be made of, besides the whitespace between `Bearer` and its token: the token
 * alphabets of the patterns above, together.
 */
const SECRET_SHAPE_CHAR = /[A-Za-z0-9._~+/=-]/;
const BEARER_BEFORE_SPACE = /\bbearer\s*$/i;

/**
 * The length of the longest prefix of `text` that {@link redactText} treats the same whatever text follows:
 * for every continuation `more`, `redactText(text.slice(0, n)) + redactText(text.slice(n) + more)` equals
 * `redactText(text + more)`. Used by streamed previews (./text-redaction-stream.ts) to show text before the
 * rest of it exists without ever showing part of a secret.
 *
 * Why it holds: the prefix ends right after a character that no rule-2 match can contain, whatever comes next —
 * one outside {@link SECRET_SHAPE_CHAR} that is not whitespace (`"`, `,`, `!`, …), or whitespace that does not
 * follow the word `bearer` (the only pattern with whitespace inside). No match crosses such a character, and
 * being a non-word character it gives `\b` the same answer as the end (or start) of a string, so each side
 * redacts alike on its own. 0 when there is no such character; then nothing can be shown yet.
 *
 * `from`: only positions from there on are looked at (a caller that already knows `text.slice(0, from)` has no
 * such character passes its length: whether a position qualifies depends only on the text before it).
 */
export function redactionSafePrefixLength(text: string, from = 0): number {
  for (let i = text.length - 1; i >= from; i -= 1) {
    const c = text[i]!;
    if (SECRET_SHAPE_CHAR.test(c)) continue;
    if (/\s/.test(c) && BEARER_BEFORE_SPACE.test(text.slice(0, i))) continue;
    return i + 1;
  }
  return 0;
}

/** `apiKey` → `api key`, `X-API-Key` → `x api key`, `ACCESS_TOKEN` → `access token`. */
function splitWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

function redactValue(value: unknown, path: PropertyKey[], state: WalkState): unknown {
  state.nodes += 1;
  if (state.nodes > MAX_SNAPSHOT_NODES) throw new SnapshotLimitError('nodes', MAX_SNAPSHOT_NODES, formatPath(path));
  if (typeof value === 'string') {
    const redacted = redactText(value);
    if (redacted !== value) state.redactedPaths.push(formatPath(path));
    return redacted;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (path.length >= MAX_SNAPSHOT_DEPTH) throw new SnapshotLimitError('depth', MAX_SNAPSHOT_DEPTH, formatPath(path));
  if (Array.isArray(value)) return value.map((item: unknown, i) => redactValue(item, [...path, i], state));
  if (!isPlainObject(value)) throw new CanonicalJsonError('non-plain object', formatPath(path));
  return redactObject(value as Record<string, unknown>, path, state);
}

function redactObject(value: Record<string, unknown>, path: PropertyKey[], state: WalkState): Record<string, unknown> {
  const entries = Object.entries(value).map(([key, member]): [string, unknown] => {
    const memberPath = [...path, key];
    if (member !== null && member !== undefined && isSensitiveKey(key)) {
      state.redactedPaths.push(formatPath(memberPath));
      return [key, REDACTED];
    }
    return [key, redactValue(member, memberPath, state)];
  });
  // fromEntries defines own properties, so a `__proto__` key stays data instead of setting the prototype.
  return Object.fromEntries(entries);
}
