/**
 * Realtime channel names, shared by the publisher, the subscribe rules, the local hub and the client (no
 * Node-only import: it runs in the browser too).
 *
 * A job's channel is `/jobs/<ownerSegment>/<jobId>` in the namespace `jobs`. AppSync Events allows at most five
 * segments per channel, each 1–50 characters of `[A-Za-z0-9-]` starting and ending with a letter or digit (the
 * API reference's pattern for a namespace name, which a channel segment follows). A token's `sub` may hold any
 * character (`auth0|123`, an e-mail), so the owner segment is not the subject itself but the first
 * {@link OWNER_SEGMENT_LENGTH} hex digits of SHA-256 over its UTF-8 bytes: always a valid segment, the same
 * wherever it is computed, and no subject text in channel names or service logs. Knowing another user's segment
 * grants nothing: the subscribe rules compare it with the caller's own token.
 */

/** The channel namespace of job streams. */
export const JOBS_NAMESPACE = 'jobs';
/** Hex digits of SHA-256(sub) in an owner segment: 160 bits. */
export const OWNER_SEGMENT_LENGTH = 40;
/** AppSync Events: at most five segments per channel path, namespace included. */
export const MAX_CHANNEL_SEGMENTS = 5;
/** The wildcard a subscription may end with (`/jobs/<owner>/*`). */
export const WILDCARD = '*';

const SEGMENT = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,48}[A-Za-z0-9])?$/;
const OWNER_SEGMENT = /^[0-9a-f]{40}$/;
/** Job ids are ULIDs (lib/api/request-schemas.ts). */
const JOB_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The channel of job `jobId` owned by the user whose owner segment is `ownerSegment`. */
export function jobChannel(ownerSegment: string, jobId: string): string {
  if (!OWNER_SEGMENT.test(ownerSegment)) throw new RangeError('not an owner segment');
  if (!JOB_ID.test(jobId)) throw new RangeError('not a job id');
  return `/${JOBS_NAMESPACE}/${ownerSegment}/${jobId}`;
}

/** Every channel of the user with `ownerSegment` (a subscription to all of their jobs). */
export function ownerChannels(ownerSegment: string): string {
  if (!OWNER_SEGMENT.test(ownerSegment)) throw new RangeError('not an owner segment');
  return `/${JOBS_NAMESPACE}/${ownerSegment}/${WILDCARD}`;
}

/** True when `jobId` can be a job channel's last segment. */
export function isJobIdSegment(jobId: string): boolean {
  return JOB_ID.test(jobId);
}

/**
 * The segments of a channel path as AppSync Events accepts it (an optional leading `/`, 1–5 segments, each a
 * valid segment; a subscription's last segment may be `*`), or undefined when it is malformed.
 */
export function channelSegments(path: string, options: { wildcard: boolean }): string[] | undefined {
  if (typeof path !== 'string') return undefined;
  const segments = (path.startsWith('/') ? path.slice(1) : path).split('/');
  if (segments.length < 1 || segments.length > MAX_CHANNEL_SEGMENTS) return undefined;
  const last = segments.length - 1;
  const valid = segments.every((s, i) => SEGMENT.test(s) || (options.wildcard && i === last && i > 0 && s === WILDCARD));
  return valid ? segments : undefined;
}

/** The owner segment of `sub` (SHA-256 through WebCrypto: Node 24 and browsers alike). */
export async function ownerSegmentOf(sub: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(sub));
  return hexPrefix(new Uint8Array(digest));
}

/** The first {@link OWNER_SEGMENT_LENGTH} hex digits of a digest. */
export function hexPrefix(digest: Uint8Array): string {
  let hex = '';
  for (const byte of digest.subarray(0, OWNER_SEGMENT_LENGTH / 2)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * The answer of `GET /api/ai/realtime` (./realtime-config.ts builds it; lib/api/response-schemas.ts
 * `RealtimeConfig` documents it): here, where browsers can import it.
 */
export interface RealtimeConfig {
  /** False: no realtime push on this stage; read the stream log (long-poll) instead. */
  available: boolean;
  /** The Event API's HTTP endpoint (the client library's `httpEndpoint`), when available. */
  httpEndpoint?: string;
  /** Its WebSocket endpoint (`wss://…/event/realtime`), when available. */
  realtimeUrl?: string;
  /** The caller's owner segment. */
  ownerSegment: string;
  /** A job's channel is this followed by its id; `<channelPrefix>*` is every job of the caller. */
  channelPrefix: string;
}
