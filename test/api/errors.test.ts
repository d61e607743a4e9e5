import { setUpApiEnvironment } from './api-env.ts';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handler as userHandler } from '../../functions/api-user.ts';
import { mapError } from '../../lib/api/error-mapper.ts';
import { PayloadTooLargeError, QuotaExceededError, RequestValidationError, TooManyJobsError } from '../../lib/api/http-errors.ts';
import { createUserApiHandler } from '../../lib/api/user-api.ts';
import { CredentialKeyFormatError, CredentialServiceUnavailableError, EnvelopeEncryptionError } from '../../lib/credentials/errors.ts';
import { getPrisma, type PrismaDb } from '../../lib/db/client.ts';
import { isDatabaseUnavailable } from '../../lib/db/connection-errors.ts';
import { getSqlPool } from '../../lib/db/sql-pool.ts';
import { newId } from '../../lib/db/ids.ts';
import { IdempotencyConflictError } from '../../lib/jobs/creation-errors.ts';
import { InputValidationError, UnknownJobTypeError } from '../../lib/jobs/errors.ts';
import { JobAlreadyCancelledError, JobNotCancellableError, JobNotFoundError, StaleTransitionError } from '../../lib/jobs/lifecycle-errors.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';
import { countRows, rawDb } from '../helpers/db.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

describe('mapError', () => {
  it.each([
    [new JobNotFoundError('j'), 404, 'JOB_NOT_FOUND'],
    [new JobNotCancellableError('j', 'succeeded'), 409, 'JOB_NOT_CANCELLABLE'],
    [new JobAlreadyCancelledError('j'), 409, 'JOB_ALREADY_CANCELLED'],
    [new IdempotencyConflictError('j', 'k'), 409, 'IDEMPOTENCY_KEY_REUSED'],
    [new InputValidationError('quiz_generation', [{ path: 'count', message: 'too small' }]), 400, 'VALIDATION_FAILED'],
    [new CredentialKeyFormatError('too_short', 'The key is too short'), 400, 'VALIDATION_FAILED'],
    [new PayloadTooLargeError(65_536), 413, 'PAYLOAD_TOO_LARGE'],
    [new TooManyJobsError('quiz_generation', 5, 30), 429, 'TOO_MANY_JOBS'],
    [new QuotaExceededError('quiz_generation', 200, 100), 429, 'QUOTA_EXCEEDED'],
    [new CredentialServiceUnavailableError('KMS down'), 503, 'PLATFORM_UNAVAILABLE'],
    [new EnvelopeEncryptionError('key disabled'), 500, 'INTERNAL'],
    [new StaleTransitionError('j', 'markCancelled', 'running'), 500, 'INTERNAL'],
    [new UnknownJobTypeError('nope'), 500, 'INTERNAL'],
    [new Error('boom'), 500, 'INTERNAL'],
    ['a thrown string', 500, 'INTERNAL'],
  ])('%o → %i %s', (err, status, code) => {
    const mapped = mapError(err);
    expect(mapped.status).toBe(status);
    expect(mapped.body.error.code).toBe(code);
    expect(mapped.expose).toBe(status < 500);
  });

  it('puts field paths of a job input under body. and keeps the error\'s own message otherwise', () => {
    const mapped = mapError(new InputValidationError('quiz_generation', [{ path: 'count', message: 'too small' }, { path: '', message: 'Unrecognized key' }]));
    expect(mapped.body.error.details).toEqual([{ path: 'body.count', message: 'too small' }, { path: 'body', message: 'Unrecognized key' }]);
    expect(mapError(new RequestValidationError([{ path: 'query.limit', message: 'too big' }])).body.error.details).toEqual([{ path: 'query.limit', message: 'too big' }]);
  });

  it('sends Retry-After with 429 and 503', () => {
    expect(mapError(new TooManyJobsError('t', 1, 30)).headers['retry-after']).toBe('30');
    expect(mapError(new QuotaExceededError('t', 1, 1234)).headers['retry-after']).toBe('1234');
    expect(mapError(new CredentialServiceUnavailableError('x')).headers['retry-after']).toBeDefined();
  });

  it('never exposes the message of a 5xx', () => {
    for (const err of [new Error('password=hunter2 at db.ts:1'), new CredentialServiceUnavailableError('KMS at 10.0.0.1 timed out')]) {
      const text = JSON.stringify(mapError(err).body);
      expect(text).not.toMatch(/hunter2|10\.0\.0\.1/);
    }
  });
});

describe('an unexpected failure inside a handler', () => {
  it('answers 500 INTERNAL with a generic message, and logs the detail server-side', async () => {
    const logged: unknown[] = [];
    const logger = new Logger({ serviceName: 'api-test', logLevel: 'ERROR' });
    logger.error = ((message: string, ...attrs: unknown[]) => void logged.push({ message, attrs })) as Logger['error'];
    const brokenDb = { aiJob: { findUnique: async () => { throw new Error('ER_LOCK_DEADLOCK in SELECT * FROM AiJob secret-sql'); } } } as unknown as PrismaDb;
    const handler = createUserApiHandler({ db: brokenDb }, logger);
    const res = await invoke(handler, apiEvent('GET /api/ai/jobs/{jobId}', { claims: userClaims('user-1'), pathParameters: { jobId: newId() } }));
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'INTERNAL', message: 'Internal server error' } });
    expect(res.raw).not.toContain('secret-sql');
    expect(JSON.stringify(logged, (_, v) => (v instanceof Error ? v.message : v))).toContain('secret-sql');
  });
});

describe('the database is unreachable', () => {
  it('answers 503 PLATFORM_UNAVAILABLE with Retry-After, not 500', async () => {
    const { createPrismaClient } = await import('../../lib/db/client.ts');
    const { freePort } = await import('../helpers/ports.ts');
    // A real client pointed at a port nobody listens on, failing fast.
    const down = createPrismaClient(`mysql://root@127.0.0.1:${await freePort()}/nothing?connectionLimit=1&poolTimeoutMs=300`);
    try {
      const handler = createUserApiHandler({ db: down }, new Logger({ serviceName: 'api-test', logLevel: 'CRITICAL' }));
      const res = await invoke(handler, apiEvent('GET /api/ai/jobs/{jobId}', { claims: userClaims('user-1'), pathParameters: { jobId: newId() } }));
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('PLATFORM_UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await down.$disconnect();
    }
  });
});

describe("RDS Proxy's pool is full (ERROR 9501, raised here by the real server with SIGNAL)", () => {
  const BORROW_TIMEOUT = "SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 9501, MESSAGE_TEXT = 'Timed-out waiting to acquire database connection'";
  afterEach(async () => {
    await (await rawDb()).query('DROP TRIGGER IF EXISTS proxy_borrow_timeout');
  });

  it('is the database being unavailable, on the raw pool and through Prisma', async () => {
    const raw = await getSqlPool().query(BORROW_TIMEOUT).catch((err: unknown) => err);
    expect(raw).toMatchObject({ errno: 9501 });
    expect(isDatabaseUnavailable(raw)).toBe(true);
    const viaPrisma = await getPrisma().$executeRawUnsafe(BORROW_TIMEOUT).catch((err: unknown) => err);
    expect(viaPrisma).toBeInstanceOf(Error);
    expect(isDatabaseUnavailable(viaPrisma)).toBe(true);
  });

  it('answers a create 503 PLATFORM_UNAVAILABLE with Retry-After, and writes nothing', async () => {
    await (await rawDb()).query(`CREATE TRIGGER proxy_borrow_timeout BEFORE INSERT ON AiJob FOR EACH ROW ${BORROW_TIMEOUT}`);
    const res = await invoke(userHandler, apiEvent('POST /api/ai/quiz-generations', {
      claims: userClaims('user-1'), body: { sourceText: 'Mitochondria make ATP.', count: 2, difficulty: 'easy' },
    }));
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('PLATFORM_UNAVAILABLE');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(await countRows('AiJob')).toBe(0);
  });
});

describe("the database's secret cannot be read (a deployed function's first request)", () => {
  it('answers 503 PLATFORM_UNAVAILABLE with Retry-After from the handler, not a crash, and reads it on the next request', async () => {
    const { freePort } = await import('../helpers/ports.ts');
    const saved = { url: process.env.DATABASE_URL, arn: process.env.DATABASE_SECRET_ARN, endpoint: process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER, attempts: process.env.AWS_MAX_ATTEMPTS };
    try {
      delete process.env.DATABASE_URL;
      process.env.DATABASE_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:db';
      process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${await freePort()}`;
      process.env.AWS_MAX_ATTEMPTS = '1';
      const res = await invoke(userHandler, apiEvent('GET /api/ai/jobs/{jobId}', { claims: userClaims('user-1'), pathParameters: { jobId: newId() } }));
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('PLATFORM_UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(process.env.DATABASE_URL).toBeUndefined();
    } finally {
      for (const [key, value] of [['DATABASE_URL', saved.url], ['DATABASE_SECRET_ARN', saved.arn], ['AWS_ENDPOINT_URL_SECRETS_MANAGER', saved.endpoint], ['AWS_MAX_ATTEMPTS', saved.attempts]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
    // With the URL back, the same handler serves (404 for an unknown job: it reached the database).
    const after = await invoke(userHandler, apiEvent('GET /api/ai/jobs/{jobId}', { claims: userClaims('user-1'), pathParameters: { jobId: newId() } }));
    expect(after.status).toBe(404);
  });
});
