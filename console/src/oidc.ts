/**
 * Deployed sign-in: OpenID Connect authorization code with PKCE (S256) through oauth4webapi, for a public
 * client (no secret), e.g. a Cognito app client with the hosted UI. Nothing is stored in the browser: the
 * issuer's page opens in a pop-up window, whose redirect back to `/console/` hands the callback URL to this
 * window over a same-origin BroadcastChannel (which works even when the issuer's Cross-Origin-Opener-Policy
 * cuts the pop-up's `opener`), and the verifier, state, nonce and tokens stay in this page's memory.
 *
 * The API gets the access token (Cognito's carries `cognito:groups` and `client_id`, which API Gateway's JWT
 * authorizer matches against its audience list); the user shown is the ID token's `sub`.
 */
import * as oauth from 'oauth4webapi';
import type { Session } from './session.ts';

export interface OidcConfig {
  issuer: string;
  clientId: string;
  /** Space-separated scopes (default `openid`; add the admin routes' scope when the stage requires one). */
  scope?: string;
}

const CHANNEL = 'ai-jobs-console-oidc';
/** How long the pop-up may take before sign-in gives up. */
const SIGN_IN_TIMEOUT_MS = 5 * 60_000;

/** Thrown when the sign-in cannot complete (blocked pop-up, cancelled or timed out, refused by the issuer). */
export class OidcSignInError extends Error {
  override readonly name = 'OidcSignInError';
}

/**
 * oauth4webapi refuses plain-HTTP endpoints. An issuer on this machine's loopback (the local runtime with
 * LOCAL_OIDC_ISSUER, as in the browser test) may use HTTP, as RFC 8252 allows for loopback; nothing else may,
 * and a deployed stage's issuer is API Gateway's JWT authorizer issuer, which must be HTTPS.
 */
function loopbackHttp(issuer: URL): { [oauth.allowInsecureRequests]?: boolean } {
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname) && ['127.0.0.1', 'localhost', '[::1]'].includes(location.hostname);
  return issuer.protocol === 'http:' && loopback ? { [oauth.allowInsecureRequests]: true } : {};
}

/** Where the issuer sends the browser back: the console's root (register it as the client's callback URL). */
export function redirectUri(): string {
  return new URL(import.meta.env.BASE_URL, location.origin).href;
}

/**
 * In the pop-up: when this page load is the issuer's redirect back (`code` or `error`, and `state`), hands the
 * URL to the window that started sign-in and closes. Returns true then (the caller renders nothing else).
 */
export function relayOidcCallback(): boolean {
  const params = new URLSearchParams(location.search);
  if (!params.has('state') || !(params.has('code') || params.has('error'))) return false;
  const channel = new BroadcastChannel(CHANNEL);
  channel.postMessage(location.href);
  channel.close();
  window.close();
  document.body.textContent = 'Signed in: you can close this window.';
  return true;
}

/**
 * Signs in through the issuer and returns the session. Call from a click handler (the pop-up opens at once).
 * `signal` cancels (the page offers that): a closed pop-up is not taken as a cancel, because a pop-up that went
 * through an issuer page with a Cross-Origin-Opener-Policy looks closed to this window while it still works.
 * @throws OidcSignInError when the pop-up is blocked, sign-in is cancelled or times out, or the issuer refuses
 */
export async function signInWithOidc(config: OidcConfig, signal?: AbortSignal): Promise<Session> {
  const popup = window.open('about:blank', 'ai-jobs-sign-in', 'popup,width=520,height=720');
  if (!popup) throw new OidcSignInError('the sign-in window was blocked: allow pop-ups for this site');
  try {
    const issuer = new URL(config.issuer);
    const insecure = loopbackHttp(issuer);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }));
    const client: oauth.Client = { client_id: config.clientId };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    if (!as.authorization_endpoint) throw new OidcSignInError(`${config.issuer} names no authorization endpoint`);
    const authorize = new URL(as.authorization_endpoint);
    authorize.search = new URLSearchParams({
      client_id: config.clientId, redirect_uri: redirectUri(), response_type: 'code', scope: config.scope ?? 'openid',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce,
    }).toString();
    const callback = waitForCallback(signal);
    popup.location.href = authorize.href;
    const params = oauth.validateAuthResponse(as, client, new URL(await callback), state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri(), verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true });
    const claims = oauth.getValidatedIdTokenClaims(tokens);
    return {
      token: tokens.access_token,
      userId: String(claims?.['cognito:username'] ?? claims?.sub ?? '?'),
      expiresAt: new Date(Date.now() + (tokens.expires_in ?? 3600) * 1000).toISOString(),
    };
  } catch (err) {
    if (err instanceof OidcSignInError) throw err;
    throw new OidcSignInError(`sign-in through ${config.issuer} failed: ${(err as Error).message}`, { cause: err });
  } finally {
    if (!popup.closed) popup.close();
  }
}

/** The callback URL the pop-up relays; rejects when cancelled or time runs out. */
function waitForCallback(signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const channel = new BroadcastChannel(CHANNEL);
    const finish = (then: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      channel.close();
      then();
    };
    const onAbort = () => finish(() => reject(new OidcSignInError('sign-in was cancelled')));
    const timer = setTimeout(() => finish(() => reject(new OidcSignInError('sign-in timed out'))), SIGN_IN_TIMEOUT_MS);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort);
    channel.onmessage = (e: MessageEvent<unknown>) => {
      if (typeof e.data === 'string') finish(() => resolve(e.data as string));
    };
  });
}
