/**
 * Optional OIDC issuer the LOCAL runtime trusts besides its own key (`LOCAL_OIDC_ISSUER`, `LOCAL_OIDC_CLIENT_ID`,
 * `LOCAL_OIDC_AUDIENCE`), so the console's deployed sign-in (authorization code + PKCE) can be tried against a
 * real issuer on this machine — e.g. the browser test's `oidc-provider` on loopback, or a Cognito user pool.
 *
 * Only lib/dev uses this: on a stage, API Gateway's JWT authorizer (issuer and audiences from CDK context) is the
 * only verifier, and nothing here is deployed. Tokens are checked as that authorizer checks them: signature by
 * the issuer's JWKS (found through its discovery document), `iss`, `exp`, and `aud` — or, without `aud`,
 * `client_id` — among the audiences.
 */
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { UnauthorizedError } from '../../api/http-errors.ts';

export interface LocalOidcSettings {
  issuer: string;
  clientId: string;
  audiences: string[];
}

/** The settings from the environment, or undefined when `LOCAL_OIDC_ISSUER` is not set. */
export function localOidcFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): LocalOidcSettings | undefined {
  const issuer = env.LOCAL_OIDC_ISSUER?.trim();
  if (!issuer) return undefined;
  const clientId = env.LOCAL_OIDC_CLIENT_ID?.trim();
  if (!clientId) throw new Error('LOCAL_OIDC_ISSUER is set, so LOCAL_OIDC_CLIENT_ID must name the console\'s client');
  const audiences = (env.LOCAL_OIDC_AUDIENCE?.trim() || clientId).split(',').map((a) => a.trim()).filter(Boolean);
  return { issuer, clientId, audiences };
}

/** The token's `iss` without verifying anything (to pick the verifier), or undefined when it is not a JWT. */
export function unverifiedIssuer(token: string): string | undefined {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}

/** A verifier for the issuer's tokens; its JWKS is fetched on first use (and on unknown key ids). */
export function createOidcVerifier(s: LocalOidcSettings): (token: string) => Promise<JWTPayload> {
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  return async (token) => {
    if (!jwks) {
      const res = await fetch(new URL('.well-known/openid-configuration', s.issuer.endsWith('/') ? s.issuer : `${s.issuer}/`));
      const { jwks_uri: uri } = (await res.json()) as { jwks_uri?: string };
      if (!uri) throw new UnauthorizedError('Invalid token');
      jwks = createRemoteJWKSet(new URL(uri));
    }
    try {
      const { payload } = await jwtVerify(token, jwks, { issuer: s.issuer, requiredClaims: ['sub', 'exp'] });
      const aud = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
      const matches = aud.length > 0 ? aud.some((a) => s.audiences.includes(a)) : s.audiences.includes(String(payload.client_id));
      if (!matches) throw new UnauthorizedError('Invalid token');
      return payload;
    } catch (err) {
      if (err instanceof UnauthorizedError) throw err;
      throw new UnauthorizedError('Invalid token', { cause: err });
    }
  };
}
