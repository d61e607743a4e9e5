/**
 * The local runtime's optional OIDC trust (lib/dev/local-runtime/local-oidc.ts): tokens of the configured
 * issuer are checked as API Gateway's JWT authorizer checks them (JWKS from discovery, iss, exp, aud or
 * client_id), and the console's config.json and CSP name the issuer. An issuer on loopback serving a real key.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleRoutes } from '../../lib/dev/local-runtime/console-routes.ts';
import { createOidcVerifier, localOidcFromEnv } from '../../lib/dev/local-runtime/local-oidc.ts';
import { generateLocalJwtKey } from '../../lib/api/local-jwt.ts';
import { UnauthorizedError } from '../../lib/api/http-errors.ts';

let issuer: string;
let server: http.Server;
const keys = await generateKeyPair('RS256');
const stranger = await generateKeyPair('RS256');

beforeAll(async () => {
  const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
    else if (req.url === '/jwks') res.end(JSON.stringify({ keys: [jwk] }));
    else res.writeHead(404).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function sign(claims: JWTPayload, o: { key?: typeof keys.privateKey; expiresIn?: string } = {}) {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(issuer).setSubject('someone')
    .setIssuedAt().setExpirationTime(o.expiresIn ?? '5m').sign(o.key ?? keys.privateKey);
}

describe('trusting a local OIDC issuer (lib/dev only)', () => {
  it('reads nothing unless LOCAL_OIDC_ISSUER is set, and then needs the client id', () => {
    expect(localOidcFromEnv({})).toBeUndefined();
    expect(() => localOidcFromEnv({ LOCAL_OIDC_ISSUER: 'http://127.0.0.1:1' })).toThrow(/LOCAL_OIDC_CLIENT_ID/);
    expect(localOidcFromEnv({ LOCAL_OIDC_ISSUER: 'http://i', LOCAL_OIDC_CLIENT_ID: 'c' })).toEqual({ issuer: 'http://i', clientId: 'c', audiences: ['c'] });
  });

  it('accepts the issuer\'s tokens whose aud (or, without aud, client_id) is an audience; refuses others with 401', async () => {
    const verify = createOidcVerifier({ issuer, clientId: 'console', audiences: ['urn:api', 'console'] });
    expect((await verify(await sign({ aud: 'urn:api', 'cognito:groups': ['SUPER_ADMIN'] })))['cognito:groups']).toEqual(['SUPER_ADMIN']);
    expect((await verify(await sign({ client_id: 'console' }))).sub).toBe('someone');
    for (const bad of [
      await sign({ aud: 'urn:other' }),
      await sign({ client_id: 'other-client' }),
      await sign({ aud: 'urn:api' }, { key: stranger.privateKey }),
      await sign({ aud: 'urn:api' }, { expiresIn: '-1m' }),
      'not-a-jwt',
    ]) {
      await expect(verify(bad)).rejects.toBeInstanceOf(UnauthorizedError);
    }
  });

  it('config.json asks for OIDC sign-in and the CSP lets the console reach the issuer', async () => {
    const routes = createConsoleRoutes({ distDir: '/nonexistent', jwtKey: generateLocalJwtKey(), audience: { issuer: 'i', audience: 'a' }, oidc: { issuer, clientId: 'console' } });
    const site = http.createServer((req, res) => void routes(req, res));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(site.address() as AddressInfo).port}/console/config.json`);
      expect(await res.json()).toEqual({ signIn: 'oidc', issuer, clientId: 'console' });
      expect(res.headers.get('content-security-policy')).toContain(`connect-src 'self' ${issuer};`);
    } finally {
      await new Promise<void>((resolve) => site.close(() => resolve()));
    }
  });
});
