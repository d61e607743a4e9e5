/**
 * Local stand-in for API Gateway's JWT authorizer: the local runtime signs tokens for developers and tests,
 * verifies each request's bearer token with {@link verifyLocalToken}, and puts {@link toAuthorizerClaims} of the
 * payload in `requestContext.authorizer.jwt.claims` — so the handlers cannot tell it from AWS.
 *
 * HS256 with a local secret (≥ 32 random bytes), never used outside local runs. Verification accepts HS256 only
 * (no algorithm confusion) and requires `sub`, `exp`, the configured issuer and audience.
 */
import { randomBytes, webcrypto } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SignJWT, base64url, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { adminPolicyFromEnv, type AdminPolicy } from './auth.ts';
import { UnauthorizedError } from './http-errors.ts';

const ALGORITHM = 'HS256';
const MIN_SECRET_BYTES = 32;
const DEFAULT_EXPIRES_IN = '1h';

/** A local signing key. */
export interface LocalJwtKey {
  readonly alg: typeof ALGORITHM;
  readonly secret: Uint8Array;
}

export interface TokenAudience {
  issuer: string;
  audience: string;
}

export interface LocalTokenClaims extends TokenAudience {
  sub: string;
  /** Adds the admin group to the admin claim (both from the environment, see `adminPolicyFromEnv`). */
  admin?: boolean;
  /** Further groups for the admin claim (an array claim, as Cognito's `cognito:groups`). */
  groups?: readonly string[];
  /** Extra claims, e.g. a near-miss admin claim in a test; the admin claim above wins over one of the same name. */
  extra?: Readonly<Record<string, unknown>>;
  /** Seconds, or a jose time span (`'15m'`, `'1h'`); default one hour. Negative numbers make an expired token. */
  expiresIn?: number | string;
}

/** A new random key. */
export function generateLocalJwtKey(): LocalJwtKey {
  return { alg: ALGORITHM, secret: new Uint8Array(randomBytes(MIN_SECRET_BYTES)) };
}

/**
 * A key from a base64url secret (as written by {@link loadOrCreateLocalJwtKey}).
 * @throws RangeError when it decodes to fewer than 32 bytes
 */
export function localJwtKeyFromSecret(encoded: string): LocalJwtKey {
  const secret = base64url.decode(encoded.trim());
  if (secret.length < MIN_SECRET_BYTES) throw new RangeError(`the local JWT secret must be at least ${MIN_SECRET_BYTES} bytes`);
  return { alg: ALGORITHM, secret };
}

/** The key stored at `file`, or a new one written there (mode 0600) when the file does not exist. */
export async function loadOrCreateLocalJwtKey(file: string): Promise<LocalJwtKey> {
  try {
    return localJwtKeyFromSecret(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = generateLocalJwtKey();
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${base64url.encode(key.secret)}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  return key;
}

/** A signed token for `claims.sub`, with the admin claim holding `groups` (plus the admin group when `admin`). */
export async function signLocalToken(key: LocalJwtKey, claims: LocalTokenClaims, policy: AdminPolicy = adminPolicyFromEnv()): Promise<string> {
  const groups = [...(claims.groups ?? []), ...(claims.admin ? [policy.group] : [])];
  const now = Math.floor(Date.now() / 1000);
  const expiresIn = claims.expiresIn ?? DEFAULT_EXPIRES_IN;
  const jwt = new SignJWT({ ...claims.extra, ...(groups.length > 0 ? { [policy.claim]: groups } : {}) })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(claims.issuer)
    .setAudience(claims.audience)
    .setIssuedAt(now)
    .setExpirationTime(typeof expiresIn === 'number' ? now + expiresIn : expiresIn);
  return jwt.sign(key.secret);
}

/** Each key imported once for verification (jose would import raw secret bytes again on every call). */
const verificationKeys = new WeakMap<LocalJwtKey, Promise<webcrypto.CryptoKey>>();

function verificationKey(key: LocalJwtKey): Promise<webcrypto.CryptoKey> {
  let imported = verificationKeys.get(key);
  if (!imported) {
    imported = webcrypto.subtle.importKey('raw', key.secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    verificationKeys.set(key, imported);
  }
  return imported;
}

/**
 * The payload of a valid token, as API Gateway's authorizer would accept it.
 *
 * A token that verified is remembered (per key, issuer and audience; at most {@link MAX_REMEMBERED_TOKENS}, oldest
 * forgotten first) and accepted again without its signature being checked, until its `exp` (or before its `nbf`,
 * where it falls through to a full check). Clients send the same bearer token on every request, and jose checks an
 * HS256 signature through WebCrypto, which hands each check to libuv's thread pool: a thread wake-up per
 * request. Under `npm run bench:peers` that was 5 of 40 context switches per job, and the API thread's largest
 * cost after socket writes and GC (the check's hand-off, about 2.5% of its samples). The token's bytes are the cache key, so a
 * token that differs in any byte is checked in full.
 * @throws UnauthorizedError (cause: jose's error) for a bad signature, wrong issuer or audience, expiry, or
 *   anything that is not a well-formed HS256 JWT
 */
export async function verifyLocalToken(key: LocalJwtKey, token: string, expected: TokenAudience): Promise<JWTPayload> {
  const remembered = rememberedTokens(key);
  const cacheKey = `${expected.issuer}\n${expected.audience}\n${token}`;
  const known = remembered.get(cacheKey);
  if (known) {
    const now = Math.floor(Date.now() / 1000);
    if (known.exp! > now && (known.nbf === undefined || known.nbf <= now)) return known;
    remembered.delete(cacheKey);
  }
  try {
    const { payload } = await jwtVerify(token, await verificationKey(key), {
      algorithms: [ALGORITHM],
      issuer: expected.issuer,
      audience: expected.audience,
      requiredClaims: ['sub', 'exp'],
    });
    if (remembered.size >= MAX_REMEMBERED_TOKENS) remembered.delete(remembered.keys().next().value!);
    remembered.set(cacheKey, frozen(payload));
    return payload;
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) {
      const reason = err instanceof joseErrors.JWTExpired ? 'Token expired' : 'Invalid token';
      throw new UnauthorizedError(reason, { cause: err });
    }
    throw err;
  }
}

/** Verified tokens remembered per key (see {@link verifyLocalToken}). */
export const MAX_REMEMBERED_TOKENS = 4096;

const verifiedTokens = new WeakMap<LocalJwtKey, Map<string, Readonly<JWTPayload>>>();

function rememberedTokens(key: LocalJwtKey): Map<string, Readonly<JWTPayload>> {
  let tokens = verifiedTokens.get(key);
  if (!tokens) {
    tokens = new Map();
    verifiedTokens.set(key, tokens);
  }
  return tokens;
}

/** How many verified tokens `key` remembers (tests). */
export function rememberedTokenCount(key: LocalJwtKey): number {
  return verifiedTokens.get(key)?.size ?? 0;
}

/** A payload callers share: frozen, its array claims too, so one request cannot change what the next one sees. */
function frozen(payload: JWTPayload): Readonly<JWTPayload> {
  for (const value of Object.values(payload)) if (Array.isArray(value)) Object.freeze(value);
  return Object.freeze(payload);
}

/**
 * The claims as API Gateway's HTTP API JWT authorizer forwards them: every value a string; an array as
 * `"[a b]"` (space-separated in brackets); numbers and booleans as their decimal text. Objects have no
 * documented form; they are passed as JSON text.
 */
export function toAuthorizerClaims(payload: JWTPayload): Record<string, string> {
  const claims: Record<string, string> = {};
  for (const [name, value] of Object.entries(payload)) {
    if (value === undefined || value === null) continue;
    claims[name] = claimText(value);
  }
  return claims;
}

function claimText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))).join(' ')}]`;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}
