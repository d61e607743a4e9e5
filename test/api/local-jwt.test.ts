import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, base64url, decodeJwt } from 'jose';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { callerOf } from '../../lib/api/auth.ts';
import { UnauthorizedError } from '../../lib/api/http-errors.ts';
import {
  MAX_REMEMBERED_TOKENS, generateLocalJwtKey, loadOrCreateLocalJwtKey, localJwtKeyFromSecret, rememberedTokenCount, signLocalToken,
  toAuthorizerClaims, verifyLocalToken,
} from '../../lib/api/local-jwt.ts';
import { rejectionOf } from '../credentials/fixtures.ts';

const audience = { issuer: 'http://localhost/local-issuer', audience: 'ai-jobs-local' };
const key = generateLocalJwtKey();
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function rejection(token: string, expected = audience, verifyKey = key): Promise<UnauthorizedError> {
  const err = await rejectionOf(verifyLocalToken(verifyKey, token, expected));
  expect(err).toBeInstanceOf(UnauthorizedError);
  return err as UnauthorizedError;
}

describe('local JWT signing and verification', () => {
  it('round trip: a signed token verifies to its sub, issuer, audience and expiry', async () => {
    const token = await signLocalToken(key, { sub: 'user-1', ...audience });
    const payload = await verifyLocalToken(key, token, audience);
    expect(payload).toMatchObject({ sub: 'user-1', iss: audience.issuer, aud: audience.audience });
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(payload['cognito:groups']).toBeUndefined();
  });

  it('an admin token carries the admin group in the configured claim (default cognito:groups)', async () => {
    const payload = await verifyLocalToken(key, await signLocalToken(key, { sub: 'a', admin: true, groups: ['USER'], ...audience }), audience);
    expect(payload['cognito:groups']).toEqual(['USER', 'SUPER_ADMIN']);
    const custom = await signLocalToken(key, { sub: 'a', admin: true, ...audience }, { claim: 'roles', group: 'ops-admin' });
    expect((await verifyLocalToken(key, custom, audience)).roles).toEqual(['ops-admin']);
  });

  it('rejects an expired token as "Token expired"', async () => {
    const token = await signLocalToken(key, { sub: 'user-1', expiresIn: -60, ...audience });
    expect((await rejection(token)).message).toBe('Token expired');
  });

  it('rejects a wrong issuer and a wrong audience', async () => {
    const token = await signLocalToken(key, { sub: 'user-1', ...audience });
    await rejection(token, { ...audience, issuer: 'https://elsewhere' });
    await rejection(token, { ...audience, audience: 'another-api' });
  });

  it('rejects a token signed with another key, and one whose payload was altered', async () => {
    const forged = await signLocalToken(generateLocalJwtKey(), { sub: 'user-1', ...audience });
    await rejection(forged);
    const [header, , signature] = (await signLocalToken(key, { sub: 'user-1', ...audience })).split('.');
    const payload = base64url.encode(JSON.stringify({ ...decodeJwt(forged), sub: 'admin', roles: ['SUPER_ADMIN'] }));
    await rejection(`${header}.${payload}.${signature}`);
  });

  it('rejects unsigned (alg none) tokens, tokens without sub or exp, and garbage', async () => {
    const none = `${base64url.encode('{"alg":"none","typ":"JWT"}')}.${base64url.encode(JSON.stringify({ sub: 'x', exp: 9_999_999_999, ...{ iss: audience.issuer, aud: audience.audience } }))}.`;
    await rejection(none);
    const noSub = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuer(audience.issuer).setAudience(audience.audience).setExpirationTime('1h').sign(key.secret);
    await rejection(noSub);
    const noExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('x').setIssuer(audience.issuer).setAudience(audience.audience).sign(key.secret);
    await rejection(noExp);
    await rejection('not.a.jwt');
  });
});

describe('remembered tokens (a verified token is not checked again until it expires)', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('a second request with the same token does no signature check and sees the same claims', async () => {
    const k = generateLocalJwtKey();
    const token = await signLocalToken(k, { sub: 'user-1', groups: ['USER'], ...audience });
    const verify = vi.spyOn(globalThis.crypto.subtle, 'verify');
    const first = await verifyLocalToken(k, token, audience);
    const second = await verifyLocalToken(k, token, audience);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(second).toEqual(first);
    expect(rememberedTokenCount(k)).toBe(1);
    // Shared between requests, so nobody can change it for the next one.
    expect(Object.isFrozen(second)).toBe(true);
    expect(Object.isFrozen(second['cognito:groups'])).toBe(true);
  });

  it('a remembered token is refused as "Token expired" once its exp passes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = new Date('2026-12-01T12:00:00Z');
    vi.setSystemTime(start);
    const k = generateLocalJwtKey();
    const token = await signLocalToken(k, { sub: 'user-1', expiresIn: 60, ...audience });
    await verifyLocalToken(k, token, audience);
    vi.setSystemTime(start.getTime() + 59_000);
    await expect(verifyLocalToken(k, token, audience)).resolves.toMatchObject({ sub: 'user-1' });
    vi.setSystemTime(start.getTime() + 60_000);
    const err = await rejectionOf(verifyLocalToken(k, token, audience));
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect((err as Error).message).toBe('Token expired');
    expect(rememberedTokenCount(k)).toBe(0);
  });

  it('a token with nbf in the future is refused, and accepted from nbf on', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = new Date('2026-12-01T12:00:00Z');
    vi.setSystemTime(start);
    const k = generateLocalJwtKey();
    const nbf = Math.floor(start.getTime() / 1000) + 30;
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('u').setIssuer(audience.issuer)
      .setAudience(audience.audience).setNotBefore(nbf).setExpirationTime(nbf + 60).sign(k.secret);
    expect((await rejection(token, audience, k)).message).toBe('Invalid token');
    vi.setSystemTime(nbf * 1000);
    await expect(verifyLocalToken(k, token, audience)).resolves.toMatchObject({ sub: 'u' });
  });

  it('what one key, issuer and audience accepted is checked in full for another', async () => {
    const k = generateLocalJwtKey();
    const token = await signLocalToken(k, { sub: 'user-1', ...audience });
    await verifyLocalToken(k, token, audience);
    await rejection(token, { ...audience, audience: 'another-api' }, k);
    await rejection(token, { ...audience, issuer: 'https://elsewhere' }, k);
    await rejection(token, audience, generateLocalJwtKey());
    // A token altered in its signature only is a different key in the cache, and fails its check.
    const altered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    await rejection(altered, audience, k);
  });

  it(`remembers at most ${MAX_REMEMBERED_TOKENS} tokens per key, forgetting the oldest`, async () => {
    const k = generateLocalJwtKey();
    const tokens = await Promise.all(Array.from({ length: MAX_REMEMBERED_TOKENS + 5 }, (_, i) => signLocalToken(k, { sub: `u${i}`, ...audience })));
    for (const token of tokens) await verifyLocalToken(k, token, audience);
    expect(rememberedTokenCount(k)).toBe(MAX_REMEMBERED_TOKENS);
    const verify = vi.spyOn(globalThis.crypto.subtle, 'verify');
    await verifyLocalToken(k, tokens.at(-1)!, audience);
    expect(verify).toHaveBeenCalledTimes(0);
    await verifyLocalToken(k, tokens[0]!, audience);
    expect(verify).toHaveBeenCalledTimes(1);
  });
});

describe('toAuthorizerClaims', () => {
  it('stringifies claims as API Gateway does: numbers as text, arrays as "[a b]"', async () => {
    const token = await signLocalToken(key, { sub: 'admin-1', admin: true, groups: ['USER'], ...audience });
    const claims = toAuthorizerClaims(await verifyLocalToken(key, token, audience));
    expect(claims).toMatchObject({ sub: 'admin-1', iss: audience.issuer, aud: audience.audience, 'cognito:groups': '[USER SUPER_ADMIN]' });
    expect(claims.exp).toMatch(/^\d+$/);
    expect(Object.values(claims).every((v) => typeof v === 'string')).toBe(true);
    expect(toAuthorizerClaims({ flag: true, nested: { a: 1 }, none: undefined })).toEqual({ flag: 'true', nested: '{"a":1}' });
  });

  it('the handlers read those claims: the caller and the admin role come through', async () => {
    const claims = toAuthorizerClaims(await verifyLocalToken(key, await signLocalToken(key, { sub: 'admin-1', admin: true, ...audience }), audience));
    expect(callerOf({ requestContext: { authorizer: { jwt: { claims, scopes: null } } } } as never)).toEqual({ userId: 'admin-1', isAdmin: true });
  });
});

describe('local signing keys', () => {
  it('creates a key file (mode 0600) on first use and loads the same key afterwards', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'local-jwt-'));
    dirs.push(dir);
    const file = join(dir, 'nested', 'jwt.key');
    const created = await loadOrCreateLocalJwtKey(file);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const loaded = await loadOrCreateLocalJwtKey(file);
    expect(Buffer.from(loaded.secret).equals(Buffer.from(created.secret))).toBe(true);
    const token = await signLocalToken(created, { sub: 'u', ...audience });
    await expect(verifyLocalToken(localJwtKeyFromSecret(await readFile(file, 'utf8')), token, audience)).resolves.toMatchObject({ sub: 'u' });
  });

  it('refuses a secret shorter than 32 bytes', () => {
    expect(() => localJwtKeyFromSecret(base64url.encode('short'))).toThrow(RangeError);
  });
});
