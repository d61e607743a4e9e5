/**
 * Who is calling, from the JWT claims API Gateway's JWT authorizer verified and put in
 * `event.requestContext.authorizer.jwt.claims` (the local runtime builds the same shape with ./local-jwt.ts).
 * Handlers never see or verify the token themselves.
 *
 * Admin is exact (docs/security.md "Admin authorization"): ONE configured claim ({@link ADMIN_CLAIM_ENV},
 * default `cognito:groups`) must hold the configured group ({@link ADMIN_GROUP_ENV}, default `SUPER_ADMIN`)
 * byte for byte, as
 * - a real JSON array with an element equal to the group (direct invocations, other integrations);
 * - API Gateway HTTP API's flattened form of an array: the authorizer writes an array claim as its elements
 *   joined by single spaces inside brackets. Which flattened values grant admin depends on the issuer:
 *   - the stage's issuer ({@link JWT_ISSUER_ENV}) is an Amazon Cognito user pool and the token is its own
 *     (`iss` equal to it): Cognito group names cannot contain whitespace (CreateGroup's `GroupName` pattern
 *     `[\p{L}\p{M}\p{S}\p{N}\p{P}]+`), so `"[a SUPER_ADMIN]"` splits on its spaces into exactly its groups,
 *     and admin is an element equal to the group;
 *   - any other issuer: only the ONE-element form, exactly `"[SUPER_ADMIN]"` — its groups may contain spaces,
 *     so `"[a SUPER_ADMIN]"` may equally be the single group `"a SUPER_ADMIN"`: ambiguous, so never admin;
 * - a single-valued string claim equal to the group.
 * Nothing else grants admin: no splitting on commas, no JSON text, no other claim, no case folding.
 */
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { ConfigurationError } from '../config/aws.ts';
import { isWellFormedText } from './well-formed.ts';
import { ForbiddenError, UnauthorizedError } from './http-errors.ts';

/** Environment variable naming the claim that carries the admin group (per stage, e.g. `roles`). */
export const ADMIN_CLAIM_ENV = 'ADMIN_CLAIM';
/** Environment variable naming the admin group. */
export const ADMIN_GROUP_ENV = 'ADMIN_GROUP';
/**
 * Environment variable holding the issuer the stage's JWT authorizer verifies (`jwtIssuer` in CDK context; the
 * local runtime sets it to `LOCAL_OIDC_ISSUER`). Only whether it is a Cognito user pool matters here.
 */
export const JWT_ISSUER_ENV = 'JWT_ISSUER';
export const DEFAULT_ADMIN_CLAIM = 'cognito:groups';
export const DEFAULT_ADMIN_GROUP = 'SUPER_ADMIN';
/** `AiJob.userId` is VARCHAR(64): a longer subject cannot own jobs. */
const MAX_SUBJECT_LENGTH = 64;
const CONTROL_CHARACTERS = /\p{Cc}/u;
/**
 * A group name usable in the flattened form: no whitespace (the separator) and no brackets (the delimiters),
 * so `"[<group>]"` can only be the one-element array of exactly that group.
 */
const UNAMBIGUOUS_GROUP = /^[^\s[\]]+$/u;
/**
 * An Amazon Cognito user pool's issuer, `https://cognito-idp.<region>.amazonaws.com/<region>_<id>` (the `iss` of
 * its tokens; `.amazonaws.com.cn` in the China regions).
 */
const COGNITO_USER_POOL_ISSUER = /^https:\/\/cognito-idp\.([a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com(?:\.cn)?\/\1_[0-9A-Za-z]+$/;

export interface Caller {
  /** The token's `sub`. */
  userId: string;
  isAdmin: boolean;
}

/** Which claim opens the admin API, and the group it must hold. */
export interface AdminPolicy {
  claim: string;
  group: string;
  /**
   * The stage's issuer when it is a Cognito user pool: its tokens' flattened group lists split on spaces
   * (see the module comment). Undefined: the strict rule for every token.
   */
  cognitoIssuer?: string;
}

/** True for the issuer URL of an Amazon Cognito user pool (exactly the form its tokens' `iss` has). */
export function isCognitoUserPoolIssuer(issuer: string | undefined): boolean {
  return issuer !== undefined && COGNITO_USER_POOL_ISSUER.test(issuer);
}

/**
 * The admin policy from {@link ADMIN_CLAIM_ENV} / {@link ADMIN_GROUP_ENV} (defaults when unset), and
 * {@link JWT_ISSUER_ENV} when it names a Cognito user pool.
 * @throws ConfigurationError when the group contains whitespace or brackets (its flattened form would be ambiguous)
 */
export function adminPolicyFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): AdminPolicy {
  const claim = env[ADMIN_CLAIM_ENV]?.trim() || DEFAULT_ADMIN_CLAIM;
  const group = env[ADMIN_GROUP_ENV]?.trim() || DEFAULT_ADMIN_GROUP;
  if (!UNAMBIGUOUS_GROUP.test(group)) throw new ConfigurationError(ADMIN_GROUP_ENV, 'must contain no whitespace or brackets');
  const issuer = env[JWT_ISSUER_ENV]?.trim();
  return isCognitoUserPoolIssuer(issuer) ? { claim, group, cognitoIssuer: issuer } : { claim, group };
}

/** The claims of the event, or undefined when the authorizer passed none. */
export function claimsOf(event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>): Record<string, unknown> | undefined {
  const claims = (event.requestContext as { authorizer?: { jwt?: { claims?: unknown } } } | undefined)?.authorizer?.jwt?.claims;
  return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
}

/**
 * True exactly when `value` (the configured claim's value as forwarded) holds `group`; see the module comment.
 * `splitFlattened`: the token comes from a Cognito user pool, so a flattened list splits on its spaces.
 * Pure, so the table of claim shapes in test/api/admin-claims.test.ts can call it directly.
 */
export function claimGrantsGroup(value: unknown, group: string, splitFlattened = false): boolean {
  if (!UNAMBIGUOUS_GROUP.test(group)) return false;
  if (Array.isArray(value)) return value.some((element) => element === group);
  if (typeof value !== 'string') return false;
  if (value === group || value === `[${group}]`) return true;
  // The outer brackets are the authorizer's; a Cognito group name may itself contain brackets, never a space.
  return splitFlattened && value.startsWith('[') && value.endsWith(']') && value.slice(1, -1).split(' ').includes(group);
}

/** Own property only: a claim named `__proto__` or `constructor` must not read the prototype. */
function ownClaim(claims: Record<string, unknown> | undefined, name: string): unknown {
  return claims && Object.hasOwn(claims, name) ? claims[name] : undefined;
}

/**
 * The caller of a request.
 * @throws UnauthorizedError when there are no claims or no usable `sub`
 */
export function callerOf(event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>, policy: AdminPolicy = adminPolicyFromEnv()): Caller {
  const claims = claimsOf(event);
  const sub = ownClaim(claims, 'sub');
  if (typeof sub !== 'string' || !isUsableSubject(sub)) throw new UnauthorizedError();
  // API Gateway verified `iss` against the stage's issuer; the local runtime also trusts its own tokens.
  const fromCognito = policy.cognitoIssuer !== undefined && ownClaim(claims, 'iss') === policy.cognitoIssuer;
  return { userId: sub, isAdmin: claimGrantsGroup(ownClaim(claims, policy.claim), policy.group, fromCognito) };
}

/**
 * A subject that can be a user id: the user id is compared exactly in the database (utf8mb4_bin), except that
 * MySQL's PAD SPACE collations ignore trailing spaces, so surrounding whitespace and control characters are
 * refused rather than risk `'alice '` reading `'alice'`'s jobs; ill-formed UTF-16 (a lone surrogate) is refused
 * because the driver would write it as `?`, merging distinct subjects.
 */
export function isUsableSubject(sub: string): boolean {
  return sub.trim() !== '' && sub.trim() === sub && sub.length <= MAX_SUBJECT_LENGTH && !CONTROL_CHARACTERS.test(sub) && isWellFormedText(sub);
}

/**
 * The caller, who must be an admin.
 * @throws UnauthorizedError as {@link callerOf}; ForbiddenError when authenticated without the admin group
 */
export function adminCallerOf(event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>): Caller {
  const policy = adminPolicyFromEnv();
  const caller = callerOf(event, policy);
  if (!caller.isAdmin) throw new ForbiddenError(`This operation requires the ${policy.group} group`);
  return caller;
}
