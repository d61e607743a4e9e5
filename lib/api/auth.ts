/**
 * Who is calling, from the JWT claims API Gateway's JWT authorizer verified and put in
 * `event.requestContext.authorizer.jwt.claims` (the local runtime builds the same shape with ./local-jwt.ts).
 * Handlers never see or verify the token themselves.
 *
 * Claim values arrive as API Gateway forwards them: strings, with an array claim flattened to `"[a b]"`;
 * tokens passed through other paths may carry real arrays or comma lists. {@link claimValues} reads all of them.
 */
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { ForbiddenError, UnauthorizedError } from './http-errors.ts';

/** The role that opens the admin API. */
export const ADMIN_ROLE = 'SUPER_ADMIN';
/** Claims searched for {@link ADMIN_ROLE}, in order. */
export const ROLE_CLAIMS = ['roles', 'groups', 'cognito:groups'] as const;
/** `AiJob.userId` is VARCHAR(64): a longer subject cannot own jobs. */
const MAX_SUBJECT_LENGTH = 64;
const CONTROL_CHARACTERS = /\p{Cc}/u;

export interface Caller {
  /** The token's `sub`. */
  userId: string;
  isAdmin: boolean;
}

type ClaimValue = string | number | boolean | readonly unknown[] | null | undefined;

/** The claims of the event, or undefined when the authorizer passed none. */
export function claimsOf(event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>): Record<string, ClaimValue> | undefined {
  const claims = (event.requestContext as { authorizer?: { jwt?: { claims?: unknown } } } | undefined)?.authorizer?.jwt?.claims;
  return typeof claims === 'object' && claims !== null ? (claims as Record<string, ClaimValue>) : undefined;
}

/**
 * The values of a multi-valued claim in any of its forms: an array; API Gateway's `"[a b c]"`; a JSON array
 * string `'["a","b"]'`; a comma- or space-separated list; a single value.
 */
export function claimValues(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number').map(String);
  if (typeof value !== 'string') return [];
  const text = value.trim();
  if (text.startsWith('[') && text.endsWith(']')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return claimValues(parsed);
    } catch {
      // API Gateway's form `[a b]` is not JSON; split it below.
    }
    return splitList(text.slice(1, -1));
  }
  return splitList(text);
}

function splitList(text: string): string[] {
  return text.split(/[\s,]+/).filter((v) => v.length > 0);
}

/**
 * The caller of a request.
 * @throws UnauthorizedError when there are no claims or no usable `sub`
 */
export function callerOf(event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>): Caller {
  const claims = claimsOf(event);
  const sub = claims?.sub;
  // The subject is the user id, compared exactly in the database (utf8mb4_bin), except that MySQL's PAD SPACE
  // collations ignore trailing spaces: a subject with surrounding whitespace or control characters is refused
  // rather than risk `'alice '` reading `'alice'`'s jobs.
  if (typeof sub !== 'string' || sub.trim() === '' || sub.trim() !== sub || sub.length > MAX_SUBJECT_LENGTH || CONTROL_CHARACTERS.test(sub)) {
    throw new UnauthorizedError();
  }
  const roles = ROLE_CLAIMS.flatMap((name) => claimValues(claims?.[name]));
  return { userId: sub, isAdmin: roles.includes(ADMIN_ROLE) };
}

/**
 * The caller, who must be an admin.
 * @throws UnauthorizedError as {@link callerOf}; ForbiddenError when authenticated without {@link ADMIN_ROLE}
 */
export function adminCallerOf(event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>): Caller {
  const caller = callerOf(event);
  if (!caller.isAdmin) throw new ForbiddenError();
  return caller;
}
