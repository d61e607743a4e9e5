/**
 * Who may subscribe to which job channel: the decision of the `jobs` namespace's onSubscribe handler on AppSync
 * Events (bundled into APPSYNC_JS code by infra/realtime-handler.ts) and of the local hub, the same function in
 * both. Written in the subset of JavaScript APPSYNC_JS runs (see ./appsync-sha256.ts).
 *
 * A subscription is allowed when the verified token (OIDC on AppSync; the local runtime's verifier locally)
 * - was issued for one of the API's audiences, checked as API Gateway's JWT authorizer checks it: `aud` names
 *   one of them or, without `aud`, `client_id` does (AppSync's own OIDC check has no such rule);
 * - and the channel is `/jobs/<ownerSegment>/<jobId>` or `/jobs/<ownerSegment>/*` whose owner segment is the
 *   caller's own (./channel.ts), or the caller is an admin (lib/api/auth.ts's exact rule), who may name any
 *   owner. Nothing else: no `/jobs/*` firehose, no deeper or shallower path, no malformed segment.
 */

import { MAX_SHA256_MESSAGE_BYTES, bytesOfBase64, sha256HexWords } from './appsync-sha256.ts';

/** The admin rule and the audiences, fixed per stage (baked into the deployed handler). */
export interface SubscribePolicy {
  adminClaim: string;
  adminGroup: string;
  audiences: string[];
}

/** Why a subscription was refused, or `allow`. */
export type SubscribeVerdict = 'allow' | 'unauthenticated' | 'audience' | 'channel' | 'not-owner';

const HEX_DIGITS = '0123456789abcdef';
const ULID_DIGITS = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** `AiJob.userId` is VARCHAR(64) (lib/api/auth.ts): a longer subject owns no job. */
const MAX_SUBJECT_LENGTH = 64;

/**
 * The owner segment (40 hex digits of SHA-256 over the subject's UTF-8, ./channel.ts) from the subject's UTF-8
 * as base64: what APPSYNC_JS's `util.base64Encode(sub)` returns.
 */
export function ownerSegmentOfBase64(subjectBase64: string): string {
  const bytes = bytesOfBase64(subjectBase64);
  return bytes.length > MAX_SHA256_MESSAGE_BYTES ? '' : sha256HexWords(bytes, 5);
}

function onlyDigitsOf(text: string, digits: string, length: number): boolean {
  if (text.length !== length) return false;
  for (const ch of text.split('')) {
    if (digits.indexOf(ch) < 0) return false;
  }
  return true;
}

function listHas(list: unknown, value: unknown): boolean {
  if (!Array.isArray(list)) return false;
  for (const item of list) {
    if (item === value) return true;
  }
  return false;
}

function ownClaim(claims: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(claims, name) ? claims[name] : undefined;
}

/** API Gateway's JWT authorizer rule: `aud` (string or list) names an audience, or without `aud`, `client_id` does. */
export function audienceAccepted(claims: Record<string, unknown>, audiences: string[]): boolean {
  const aud = ownClaim(claims, 'aud');
  if (typeof aud === 'string') return listHas(audiences, aud);
  if (Array.isArray(aud)) {
    for (const a of aud) {
      if (listHas(audiences, a)) return true;
    }
    return false;
  }
  if (aud !== undefined && aud !== null) return false;
  return listHas(audiences, ownClaim(claims, 'client_id'));
}

/** lib/api/auth.ts `claimGrantsGroup` on the token's raw claim: a list holding the group, or the exact string. */
export function claimsGrantAdmin(claims: Record<string, unknown>, policy: SubscribePolicy): boolean {
  const value = ownClaim(claims, policy.adminClaim);
  if (Array.isArray(value)) return listHas(value, policy.adminGroup);
  return typeof value === 'string' && (value === policy.adminGroup || value === '[' + policy.adminGroup + ']');
}

/** The channel shape a subscriber may name: `jobs`, an owner segment, a job id or `*`. */
function channelShapeOk(segments: unknown): boolean {
  if (!Array.isArray(segments) || segments.length !== 3 || segments[0] !== 'jobs') return false;
  const owner = segments[1];
  const job = segments[2];
  if (typeof owner !== 'string' || !onlyDigitsOf(owner, HEX_DIGITS, 40)) return false;
  return job === '*' || (typeof job === 'string' && onlyDigitsOf(job, ULID_DIGITS, 26));
}

function usableSubject(sub: unknown): sub is string {
  return typeof sub === 'string' && sub.length > 0 && sub.length <= MAX_SUBJECT_LENGTH && sub.trim() === sub;
}

/**
 * The decision on a subscription to the channel with `segments` by the caller `identity` (`{ sub, claims }`,
 * the token's verified payload); `subjectBase64` is `identity.sub`'s UTF-8 as base64 (the handler passes
 * `util.base64Encode(sub)`). Never throws.
 */
export function authorizeJobSubscription(segments: unknown, identity: unknown, policy: SubscribePolicy, subjectBase64: string): SubscribeVerdict {
  if (identity === null || typeof identity !== 'object') return 'unauthenticated';
  const sub = (identity as { sub?: unknown }).sub;
  const claims = (identity as { claims?: unknown }).claims;
  if (!usableSubject(sub) || claims === null || typeof claims !== 'object') return 'unauthenticated';
  if (!audienceAccepted(claims as Record<string, unknown>, policy.audiences)) return 'audience';
  if (!channelShapeOk(segments)) return 'channel';
  if (claimsGrantAdmin(claims as Record<string, unknown>, policy)) return 'allow';
  return ownerSegmentOfBase64(subjectBase64) === (segments as string[])[1] ? 'allow' : 'not-owner';
}
