/**
 * The local runtime answers what API Gateway answers itself with the same statuses and `{"message"}` shape
 * (no route 404, authorizer 401, header quota 431), and what the handlers answer with `{"error"}` (415 for a
 * non-JSON body, 400 for bytes that are not UTF-8, 401 for a subject that is not well-formed) — over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { MAX_REQUEST_LINE_AND_HEADER_BYTES } from '../../lib/dev/local-runtime/http-gateway.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';

let e: E2e;
let token: string;
beforeAll(async () => {
  e = await startE2e();
  token = await e.token('gw-user');
});
afterAll(async () => e.stop());

async function call(path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${e.runtime.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const auth = () => ({ authorization: `Bearer ${token}` });

describe('API Gateway\'s own responses', () => {
  it('no route → 404 {"message":"Not Found"}; no or a bad token → 401 {"message":"Unauthorized"}', async () => {
    expect(await call('/api/ai/nothing', { headers: auth() })).toEqual({ status: 404, body: { message: 'Not Found' } });
    expect(await call('/api/ai/jobs/', { headers: auth() })).toEqual({ status: 404, body: { message: 'Not Found' } });
    expect(await call('/api/ai/jobs')).toEqual({ status: 401, body: { message: 'Unauthorized' } });
    expect(await call('/api/ai/jobs', { headers: { authorization: 'Bearer x.y.z' } })).toEqual({ status: 401, body: { message: 'Unauthorized' } });
  });

  it(`request line and header values above ${MAX_REQUEST_LINE_AND_HEADER_BYTES} bytes → 431; just below passes`, async () => {
    const base = `GET /api/ai/jobs HTTP/1.1`.length + token.length + 'Bearer '.length;
    const fits = await call('/api/ai/jobs', { headers: { ...auth(), 'x-pad': 'a'.repeat(MAX_REQUEST_LINE_AND_HEADER_BYTES - base - 2_000) } });
    expect(fits.status).toBe(200);
    const over = await call('/api/ai/jobs', { headers: { ...auth(), 'x-pad': 'a'.repeat(MAX_REQUEST_LINE_AND_HEADER_BYTES) } });
    expect(over).toEqual({ status: 431, body: { message: 'Request Header Fields Too Large' } });
  });
});

describe('the handlers\' contract over HTTP', () => {
  const create = (body: string | Uint8Array, contentType?: string) => call('/api/ai/feynman-evaluations', {
    method: 'POST', body, headers: { ...auth(), ...(contentType ? { 'content-type': contentType } : {}) },
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/jsonp'])('a body sent as %s → 415 UNSUPPORTED_MEDIA_TYPE', async (type) => {
    const res = await create(JSON.stringify({ concept: 'c', explanation: 'e' }), type);
    expect(res).toEqual({ status: 415, body: { error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.any(String) } } });
  });

  it('application/json with or without charset=utf-8 is accepted', async () => {
    expect((await create(JSON.stringify({ concept: 'c', explanation: 'e' }), 'application/json')).status).toBe(202);
    expect((await create(JSON.stringify({ concept: 'c', explanation: 'e' }), 'Application/JSON; charset="UTF-8"')).status).toBe(202);
  });

  it('bytes that are not UTF-8 → 400, never stored as U+FFFD', async () => {
    const bytes = Buffer.concat([Buffer.from('{"concept":"c","explanation":"'), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from('"}')]);
    const res = await create(bytes, 'application/json');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'VALIDATION_FAILED', details: [{ path: 'body', message: 'must be UTF-8' }] } });
  });

  it('a token whose sub is a lone surrogate → 401 UNAUTHORIZED from the handler', async () => {
    const forgedSub = await new SignJWT({ sub: 'a\uD800' }).setProtectedHeader({ alg: 'HS256' }).setIssuer(e.runtime.audience.issuer)
      .setAudience(e.runtime.audience.audience).setExpirationTime('1h').sign(e.runtime.jwtKey.secret);
    expect(await call('/api/ai/jobs', { headers: { authorization: `Bearer ${forgedSub}` } }))
      .toEqual({ status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'Authentication required' } } });
  });

  it('duplicate query parameters are joined with commas (payload 2.0), undecodable ones kept as sent', async () => {
    expect((await call('/api/ai/jobs?status=queued&status=running', { headers: auth() })).body).toMatchObject({ error: { details: [{ path: 'query.status' }] } });
    expect((await call('/api/ai/jobs?jobType=%ED%A0%80', { headers: auth() })).status).toBe(400);
  });
});
