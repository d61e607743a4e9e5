/**
 * The HTTP API in front of graphile-worker-kept's create (bench/peers/http-front.ts): what it refuses and why,
 * and that an accepted request reaches the create with the token's subject, the idempotency key and the input as
 * the job type's schema parsed it. Real HTTP on loopback through the benches' own client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLocalJwtKey, signLocalToken } from '../../lib/api/local-jwt.ts';
import { quizGenerationJob } from '../../lib/job-types/quiz-generation.ts';
import { requestJson } from '../../bench/peers/http-clients.ts';
import { startHttpFront, type HttpFront } from '../../bench/peers/http-front.ts';

const audience = { issuer: 'test-front', audience: 'test-front' };
const key = generateLocalJwtKey();
const created: { userId: string; idempotencyKey: string; input: unknown }[] = [];
let front: HttpFront;
let token: string;
const input = { sourceText: 'Mitochondria make ATP.', count: 2, difficulty: 'easy' };

beforeAll(async () => {
  front = await startHttpFront({
    key, audience, inputSchema: quizGenerationJob.inputSchema,
    async create(r) {
      if (r.idempotencyKey === 'fails') throw new Error('the database refused');
      created.push(r);
      return `job-${created.length}`;
    },
  });
  token = await signLocalToken(key, { sub: 'user-1', ...audience });
});
afterAll(() => front.close());

const post = (t: string, body: string, headers: Record<string, string> = { 'idempotency-key': 'k-1' }) => requestJson('POST', `${front.url}/jobs`, t, body, headers);

describe('the HTTP front of a peer', () => {
  it('creates the job of the token\'s subject with the parsed input and answers 202 with its id', async () => {
    const res = await post(token, JSON.stringify(input));
    expect(res).toEqual({ status: 202, text: JSON.stringify({ jobId: 'job-1' }) });
    expect(created.at(-1)).toEqual({ userId: 'user-1', idempotencyKey: 'k-1', input: quizGenerationJob.inputSchema.parse(input) });
  });

  it('refuses a token it did not sign, of another audience, or expired, with 401, before creating anything', async () => {
    const before = created.length;
    const others = [
      await signLocalToken(generateLocalJwtKey(), { sub: 'user-1', ...audience }),
      await signLocalToken(key, { sub: 'user-1', issuer: audience.issuer, audience: 'someone-else' }),
      await signLocalToken(key, { sub: 'user-1', ...audience, expiresIn: -60 }),
      'not-a-jwt',
    ];
    for (const t of others) expect((await post(t, JSON.stringify(input))).status).toBe(401);
    expect(created.length).toBe(before);
  });

  it('refuses a body that is not JSON, an input the schema rejects, or no Idempotency-Key, with 400 saying which', async () => {
    const notJson = await post(token, '{');
    expect(notJson.status).toBe(400);
    expect(notJson.text).toContain('not JSON');
    const invalid = await post(token, JSON.stringify({ ...input, count: 'two' }));
    expect(invalid.status).toBe(400);
    expect(invalid.text).toContain('count');
    const noKey = await post(token, JSON.stringify(input), {});
    expect(noKey.status).toBe(400);
    expect(noKey.text).toContain('Idempotency-Key');
  });

  it('answers 404 off its one route, 413 past the API\'s body limit, and 500 with the reason when the create fails', async () => {
    expect((await requestJson('GET', `${front.url}/jobs`, token)).status).toBe(404);
    expect((await post(token, JSON.stringify({ ...input, sourceText: 'x'.repeat(70_000) }))).status).toBe(413);
    const failed = await post(token, JSON.stringify(input), { 'idempotency-key': 'fails' });
    expect(failed.status).toBe(500);
    expect(failed.text).toContain('the database refused');
  });
});
