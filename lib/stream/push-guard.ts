/**
 * The shape check a client runs on what arrives over the realtime connection, without zod: the client library
 * runs in the admin console, whose JavaScript budget cannot hold a schema library (docs/console.md), and a push
 * is a hint checked only enough to be applied safely (types of the fields a reader uses). The zod schemas of
 * ./protocol.ts stay the server's and the API document's contract; `test/stream/push-guard.test.ts` holds this
 * check equal to them on arbitrary values.
 */
import type { StreamEntry, StreamPush } from './protocol.ts';

const STATUSES = new Set(['queued', 'running', 'succeeded', 'failed', 'cancelled']);

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown, min: number): boolean => Number.isInteger(v) && (v as number) >= min;
const isString = (v: unknown): v is string => typeof v === 'string';
const optional = (v: unknown, check: (x: unknown) => boolean): boolean => v === undefined || check(v);
/** An ISO 8601 UTC instant with seconds (`z.iso.datetime()`): a real calendar date and time, nothing rolled over. */
function isInstant(v: unknown): boolean {
  const m = isString(v) ? /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?Z$/.exec(v) : null;
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const t = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  return t.getUTCFullYear() === year && t.getUTCMonth() === month - 1 && t.getUTCDate() === day && t.getUTCHours() === hour
    && t.getUTCMinutes() === minute && t.getUTCSeconds() === second;
}

/** Keys each entry type may have (the schemas are strict objects). */
const KEYS: Record<string, ReadonlySet<string>> = {
  status: new Set(['seq', 'attempt', 'at', 'type', 'status', 'retryAt', 'resultUrl', 'error', 'waitingFor']),
  text: new Set(['seq', 'attempt', 'at', 'type', 'field', 'delta']),
  item: new Set(['seq', 'attempt', 'at', 'type', 'field', 'index', 'item']),
};

const isPublicError = (v: unknown): boolean => isObject(v) && Object.keys(v).every((k) => k === 'code' || k === 'message') && isString(v.code) && isString(v.message);
const isWaitingFor = (v: unknown): boolean => isObject(v) && Object.keys(v).every((k) => k === 'reason' || k === 'until')
  && (v.reason === 'provider_capacity' || v.reason === 'spend_cap') && isInstant(v.until);

/** True when `v` is a stream entry as ./protocol.ts `streamEntrySchema` accepts it. */
export function isStreamEntry(v: unknown): v is StreamEntry {
  if (!isObject(v) || !isString(v.type) || !Object.hasOwn(KEYS, v.type)) return false;
  if (!Object.keys(v).every((k) => KEYS[v.type as string]!.has(k))) return false;
  if (!isCount(v.seq, 1) || !isCount(v.attempt, 0) || !isInstant(v.at)) return false;
  if (v.type === 'text') return isString(v.field) && isString(v.delta);
  if (v.type === 'item') return isString(v.field) && isCount(v.index, 0) && 'item' in v;
  return isString(v.status) && STATUSES.has(v.status) && optional(v.retryAt, isInstant) && optional(v.resultUrl, isString)
    && optional(v.error, isPublicError) && optional(v.waitingFor, isWaitingFor);
}

/** True when `v` is a {@link StreamPush}: `{userId, jobId, entries}` and nothing else, every entry valid. */
export function isStreamPush(v: unknown): v is StreamPush {
  return isObject(v) && Object.keys(v).every((k) => k === 'userId' || k === 'jobId' || k === 'entries')
    && isString(v.userId) && isString(v.jobId) && Array.isArray(v.entries) && v.entries.every(isStreamEntry);
}
