import { setUpApiEnvironment, receiveAll, type ApiTestEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as userHandler } from '../../functions/api-user.ts';
import { createUserApiHandler } from '../../lib/api/user-api.ts';
import { jobStatusResponseSchema } from '../../lib/api/response-schemas.ts';
import { MAX_BODY_BYTES } from '../../lib/api/request-schemas.ts';
import { createWithinLimits, readCreationPreflight } from '../../lib/api/creation-limits.ts';
import { getPrisma, type PrismaDb } from '../../lib/db/client.ts';
import { getSqlPool } from '../../lib/db/sql-pool.ts';
import { createJob } from '../../lib/jobs/create-job.ts';
import { jobRegistry } from '../../lib/jobs/registry.ts';
import { ULID_PATTERN, newId } from '../../lib/db/ids.ts';
import { countRows } from '../helpers/db.ts';
import { insertJob, minutesAgo } from '../helpers/factories.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';

let env: ApiTestEnvironment;
beforeAll(async () => {
  env = await setUpApiEnvironment();
});

const CREATE_QUIZ = 'POST /api/ai/quiz-generations';
const quizInput = { sourceText: 'Photosynthesis turns light into chemical energy.', count: 3, difficulty: 'easy' };

function create(routeKey: string, body: unknown, options: { sub?: string; key?: string } = {}) {
  return invoke(userHandler, apiEvent(routeKey, {
    claims: userClaims(options.sub ?? 'user-1'),
    body,
    headers: options.key ? { 'Idempotency-Key': options.key } : {},
  }));
}

/** `n` job rows like `insertJob(overrides)`, in one insert after the first. */
async function insertJobs(n: number, overrides: Parameters<typeof insertJob>[0]): Promise<void> {
  const { id: _id, ...template } = await insertJob(overrides);
  await getPrisma().aiJob.createMany({ data: Array.from({ length: n - 1 }, () => ({ ...template, id: newId() })) });
}

/** A promise the test opens when it chooses. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => { open = resolve; });
  return { promise, open };
}

/** A database that fails the test on any use: proves a request was refused before any query. */
function untouchableDb(): PrismaDb {
  return new Proxy({} as PrismaDb, {
    get: (_, property) => {
      throw new Error(`the database was used (${String(property)}) before the request was validated`);
    },
  });
}

describe('POST creation routes', () => {
  it.each([
    ['POST /api/ai/feynman-evaluations', 'feynman_evaluation', { concept: 'Entropy', explanation: 'Disorder tends to grow.' }, 'interactive'],
    [CREATE_QUIZ, 'quiz_generation', quizInput, 'background'],
    ['POST /api/ai/flashcard-generations', 'flashcard_generation', { sourceText: 'Mitochondria make ATP.' }, 'background'],
  ] as const)('%s creates a %s job: 202, status response, job + snapshot + outbox row, message on its queue', async (routeKey, jobType, body, queue) => {
    const res = await create(routeKey, body);
    expect(res.status).toBe(202);
    const view = jobStatusResponseSchema.parse(res.body);
    expect(view).toMatchObject({ jobType, lifecycleStatus: 'queued', queueName: queue, progress: 0 });
    expect(view.jobId).toMatch(ULID_PATTERN);
    expect(res.headers.location).toBe(`/api/ai/jobs/${view.jobId}`);
    const job = await getPrisma().aiJob.findUniqueOrThrow({ where: { id: view.jobId } });
    expect(job).toMatchObject({ userId: 'user-1', triggerType: 'user', targetType: 'user', targetId: 'user-1', credentialMode: 'platform_key' });
    expect(await countRows('AiJobSnapshot', 'jobId = ?', [view.jobId])).toBe(1);
    expect(await countRows('OutboxEvent', "aggregateId = ? AND status = 'published'", [view.jobId])).toBe(1);
    const messages = await receiveAll(env.queues[queue].queueUrl);
    expect(messages.map((m) => JSON.parse(m.Body ?? '{}').jobId)).toContain(view.jobId);
  });

  it('answers a repeated Idempotency-Key with the first job (202, replay header) and writes nothing new', async () => {
    const first = await create(CREATE_QUIZ, quizInput, { key: 'key-1' });
    const second = await create(CREATE_QUIZ, quizInput, { key: 'key-1' });
    expect(second.status).toBe(202);
    expect(second.body.jobId).toBe(first.body.jobId);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await countRows('AiJob')).toBe(1);
    expect(await countRows('OutboxEvent')).toBe(1);
  });

  it('refuses the same Idempotency-Key with a different body: 409 IDEMPOTENCY_KEY_REUSED', async () => {
    await create(CREATE_QUIZ, quizInput, { key: 'key-2' });
    const res = await create(CREATE_QUIZ, { ...quizInput, count: 4 }, { key: 'key-2' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: { code: 'IDEMPOTENCY_KEY_REUSED', message: expect.any(String) } });
    expect(await countRows('AiJob')).toBe(1);
  });

  it('scopes idempotency keys per user: the same key from another user creates another job', async () => {
    const a = await create(CREATE_QUIZ, quizInput, { key: 'shared', sub: 'user-a' });
    const b = await create(CREATE_QUIZ, quizInput, { key: 'shared', sub: 'user-b' });
    expect(b.status).toBe(202);
    expect(b.body.jobId).not.toBe(a.body.jobId);
  });
});

describe('creation input is validated before any query', () => {
  const guarded = createUserApiHandler({ db: untouchableDb() });
  const send = (options: Parameters<typeof apiEvent>[1]) => invoke(guarded, apiEvent(CREATE_QUIZ, { claims: userClaims('user-1'), ...options }));

  it('rejects an unknown field with 400 VALIDATION_FAILED naming body.<field>', async () => {
    const res = await send({ body: { ...quizInput, userId: 'someone-else' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details).toEqual([{ path: 'body', message: expect.stringContaining('userId') }]);
  });

  it('rejects a wrong field with its path', async () => {
    const res = await send({ body: { ...quizInput, count: 0 } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'body.count', message: expect.any(String) }]);
  });

  it.each([
    ['invalid JSON', { body: '{"sourceText": ' }, 'must be valid JSON'],
    ['no body', {}, 'a JSON body is required'],
  ])('rejects %s with 400 on path body', async (_, options, message) => {
    const res = await send(options);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'body', message }]);
  });

  it('rejects a malformed Idempotency-Key with 400 naming the header', async () => {
    const res = await send({ body: quizInput, headers: { 'Idempotency-Key': 'has:colon' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'header.idempotency-key', message: expect.any(String) }]);
  });

  it('refuses a body over 64 KiB with 413 PAYLOAD_TOO_LARGE, plain or base64-encoded', async () => {
    const big = JSON.stringify({ ...quizInput, sourceText: 'x'.repeat(MAX_BODY_BYTES) });
    for (const event of [{ body: big }, { body: Buffer.from(big).toString('base64'), isBase64Encoded: true }]) {
      const res = await send(event);
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('accepts a base64-encoded body within the limit', async () => {
    const res = await invoke(userHandler, apiEvent(CREATE_QUIZ, {
      claims: userClaims('user-1'), body: Buffer.from(JSON.stringify(quizInput)).toString('base64'), isBase64Encoded: true,
    }));
    expect(res.status).toBe(202);
  });
});

describe('per-user limits', () => {
  it('refuses past maxActiveJobsPerUser active jobs of the type: 429 TOO_MANY_JOBS with Retry-After 30', async () => {
    for (let i = 0; i < 5; i += 1) await insertJob({ jobType: 'quiz_generation', lifecycleStatus: i % 2 ? 'running' : 'queued' });
    await insertJob({ jobType: 'quiz_generation', lifecycleStatus: 'succeeded' });
    await insertJob({ jobType: 'flashcard_generation', lifecycleStatus: 'queued', userId: 'user-1' });
    const res = await create(CREATE_QUIZ, quizInput);
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('TOO_MANY_JOBS');
    expect(res.headers['retry-after']).toBe('30');
    // The guard stopped the creating transaction: no job, audit, snapshot or outbox row of the refused create.
    expect(await countRows('AiJob')).toBe(7);
    expect(await countRows('AiJobTransition', "reason = 'created'")).toBe(0);
    expect(await countRows('AiJobSnapshot')).toBe(0);
    expect(await countRows('OutboxEvent')).toBe(0);
    const other = await create(CREATE_QUIZ, quizInput, { sub: 'user-2' });
    expect(other.status).toBe(202);
  });

  it('refuses past dailyQuotaPerUser jobs today (UTC): 429 QUOTA_EXCEEDED, Retry-After = seconds to midnight UTC', async () => {
    await insertJobs(200, { jobType: 'quiz_generation', lifecycleStatus: 'succeeded' });
    const res = await create(CREATE_QUIZ, quizInput);
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('QUOTA_EXCEEDED');
    expect(await countRows('AiJob')).toBe(200);
    expect(await countRows('OutboxEvent')).toBe(0);
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    const retryAfter = Number(res.headers['retry-after']);
    expect(Math.abs(retryAfter - (midnight - now.getTime()) / 1000)).toBeLessThan(5);
  });

  it('does not count jobs created before today towards the daily quota', async () => {
    const yesterday = new Date(Date.now() - 86_400_000);
    await insertJobs(200, { jobType: 'quiz_generation', lifecycleStatus: 'succeeded', createdAt: yesterday });
    expect((await create(CREATE_QUIZ, quizInput)).status).toBe(202);
  });

  it('tries a refused create again only behind the guard: when one job ends, one of two creates refused together gets in', async () => {
    const def = jobRegistry.get('quiz_generation');
    const active = await Promise.all(Array.from({ length: def.limits.maxActiveJobsPerUser }, () => insertJob({ jobType: 'quiz_generation', lifecycleStatus: 'running' })));
    const now = new Date();
    const request = { userId: 'user-1', jobType: def.jobType, triggerType: 'user' as const, targetType: 'user', targetId: 'user-1', input: quizInput };
    const deps = { db: getPrisma(), registry: jobRegistry, eagerDispatch: null };
    // The interleaving that let both through before: both creates are refused at the limit; one job ends; both
    // read counts within the limit; the first creates; then the second creates.
    const refused = { first: gate(), second: gate() };
    const ended = gate();
    const secondCounted = gate();
    const firstCreatedAgain = gate();
    const attempt = (label: 'first' | 'second') => {
      let creates = 0;
      return createWithinLimits('user-1', def, now, {
        create: async (guard) => {
          creates += 1;
          if (creates === 1) {
            try {
              return await createJob(guard ? { ...request, guard } : request, deps);
            } catch (err) {
              refused[label].open();
              throw err;
            }
          }
          await (label === 'first' ? secondCounted : firstCreatedAgain).promise;
          try {
            return await createJob(guard ? { ...request, guard } : request, deps);
          } finally {
            if (label === 'first') firstCreatedAgain.open();
          }
        },
        counts: async () => {
          await ended.promise;
          const counts = await readCreationPreflight(getSqlPool(), 'user-1', def, now, {});
          if (label === 'second') secondCounted.open();
          return counts;
        },
      });
    };
    const outcomes = Promise.allSettled([attempt('first'), attempt('second')]);
    await Promise.all([refused.first.promise, refused.second.promise]);
    await getPrisma().aiJob.update({ where: { id: active[0]!.id }, data: { lifecycleStatus: 'succeeded' } });
    ended.open();
    const [first, second] = await outcomes;
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: { code: 'TOO_MANY_JOBS' } });
    expect(await countRows('AiJob', "lifecycleStatus IN ('queued', 'running')")).toBe(def.limits.maxActiveJobsPerUser);
  });

  it('still replays an existing Idempotency-Key when the limit is reached', async () => {
    const first = await create(CREATE_QUIZ, quizInput, { key: 'before-limit' });
    for (let i = 0; i < 4; i += 1) await insertJob({ jobType: 'quiz_generation', createdAt: minutesAgo(1) });
    expect((await create(CREATE_QUIZ, quizInput)).body.error.code).toBe('TOO_MANY_JOBS');
    const replay = await create(CREATE_QUIZ, quizInput, { key: 'before-limit' });
    expect(replay.status).toBe(202);
    expect(replay.body.jobId).toBe(first.body.jobId);
  });
});
