/**
 * Identities and text survive every byte: lone surrogates, U+0000, U+FFFF, 4-byte emoji, combining marks and
 * RTL marks in bodies, query strings, path ids and token subjects either round-trip exactly (checked in the
 * database) or are refused with a 4xx — never a 500, never a silent change.
 */
import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as adminHandler } from '../../functions/api-admin.ts';
import { handler as userHandler } from '../../functions/api-user.ts';
import { rawDb } from '../helpers/db.ts';
import { adminClaims, apiEvent, invoke, userClaims } from '../helpers/api-events.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

/** Well-formed Unicode that must round-trip exactly. */
const WELL_FORMED: readonly [string, string][] = [
  ['U+0000', 'nul\u0000byte'],
  ['U+FFFF', 'non\uFFFFchar'],
  ['4-byte emoji', 'emoji \u{1F600} \u{1F9D1}\u200D\u{1F4BB}'],
  ['combining marks', 'e\u0301\u0302 o\u0308'],
  ['RTL marks', 'a\u202Ebc\u200F \u2067x\u2069'],
  ['U+10FFFF', 'max\u{10FFFF}'],
];
/** Ill-formed UTF-16: refused with 400 (401 for a subject). */
const ILL_FORMED: readonly [string, string][] = [
  ['a lone high surrogate', 'lone \uD800 high'],
  ['a lone low surrogate', 'lone \uDC00 low'],
  ['a reversed pair', 'rev \uDC00\uD800'],
];

async function snapshotOf(jobId: string): Promise<Record<string, unknown>> {
  const [rows] = await (await rawDb()).query('SELECT content FROM AiJobSnapshot WHERE jobId = ?', [jobId]);
  const content = (rows as { content: unknown }[])[0]!.content;
  return (typeof content === 'string' ? JSON.parse(content) : content) as Record<string, unknown>;
}

const create = (sub: string, body: unknown) =>
  invoke(userHandler, apiEvent('POST /api/ai/feynman-evaluations', { claims: userClaims(sub), body }));

describe('bodies', () => {
  it.each(WELL_FORMED)('%s in job input is stored exactly', async (_, text) => {
    const res = await create('u-body', { concept: `c ${text}`, explanation: `e ${text} end` });
    expect(res.status).toBe(202);
    expect(await snapshotOf(res.body.jobId ?? res.body.id)).toMatchObject({ concept: `c ${text}`, explanation: `e ${text} end` });
  });

  it.each(ILL_FORMED)('%s in a value or a key → 400 VALIDATION_FAILED naming the field', async (_, text) => {
    const value = await create('u-body', { concept: 'c', explanation: text });
    expect(value.status).toBe(400);
    expect(value.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'body.explanation' }] });
    const key = await create('u-body', { concept: 'c', explanation: 'e', [text]: 1 });
    expect(key.status).toBe(400);
    const credential = await invoke(userHandler, apiEvent('PUT /api/ai/credentials/deepseek', { claims: userClaims('u-body'), body: { apiKey: `sk-${text}` } }));
    expect(credential.status).toBe(400);
    expect(credential.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('a base64 body that is not UTF-8 → 400, not U+FFFD', async () => {
    const bytes = Buffer.concat([Buffer.from('{"concept":"c","explanation":"'), Buffer.from([0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}')]);
    const res = await invoke(userHandler, apiEvent('POST /api/ai/feynman-evaluations', { claims: userClaims('u-body'), body: bytes.toString('base64'), isBase64Encoded: true }));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'body', message: 'must be UTF-8' }]);
  });
});

describe('query strings and path ids', () => {
  it.each([...WELL_FORMED, ...ILL_FORMED])('%s as a filter or a job id → 4xx, never 500', async (_, text) => {
    const list = await invoke(userHandler, apiEvent('GET /api/ai/jobs', { claims: userClaims('u-q'), query: { jobType: text } }));
    expect(list.status).toBe(400);
    const name = await invoke(userHandler, apiEvent('GET /api/ai/jobs', { claims: userClaims('u-q'), query: { [text]: 'x' } }));
    expect(name.status).toBe(400);
    for (const routeKey of ['GET /api/ai/jobs/{jobId}', 'POST /api/ai/jobs/{jobId}/cancel', 'GET /api/ai/quiz-generations/{jobId}']) {
      const res = await invoke(userHandler, apiEvent(routeKey, { claims: userClaims('u-q'), pathParameters: { jobId: text } }));
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].path).toMatch(/^path/);
    }
  });

  it.each(ILL_FORMED)('%s in the admin userId filter → 400 query.userId', async (_, text) => {
    const res = await invoke(adminHandler, apiEvent('GET /admin-api/ai/jobs', { claims: adminClaims(), query: { userId: text } }));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'query.userId' })]);
  });
});

describe('token subjects', () => {
  it.each(WELL_FORMED.filter(([name]) => name !== 'U+0000'))('%s in sub: the job belongs to exactly that subject', async (_, text) => {
    const sub = `s-${text}`;
    const res = await create(sub, { concept: 'c', explanation: 'e' });
    expect(res.status).toBe(202);
    const [rows] = await (await rawDb()).query('SELECT userId FROM AiJob');
    expect((rows as { userId: string }[]).map((r) => r.userId)).toEqual([sub]);
    const admin = await invoke(adminHandler, apiEvent('GET /admin-api/ai/jobs', { claims: adminClaims(), query: { userId: sub } }));
    expect(admin.body.items).toHaveLength(1);
    const mine = await invoke(userHandler, apiEvent('GET /api/ai/jobs', { claims: userClaims(sub) }));
    expect(mine.body.items).toHaveLength(1);
  });

  it.each([...ILL_FORMED, ['U+0000 (a control character)', 'a\u0000b'] as const])('%s in sub → 401, and never the account whose id it would become', async (_, text) => {
    const victim = text.replace(/[\uD800-\uDFFF]/g, '?');
    await create(victim, { concept: 'c', explanation: 'e' });
    for (const routeKey of ['GET /api/ai/jobs', 'POST /api/ai/feynman-evaluations']) {
      const res = await invoke(userHandler, apiEvent(routeKey, { claims: userClaims(text), body: routeKey.startsWith('POST') ? { concept: 'c', explanation: 'e' } : undefined }));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message: 'Authentication required' } });
    }
  });
});
