/**
 * Transactional creation against the real database: every acceptance line of seed #289.
 * Eager dispatch is switched off here (eagerDispatch: null); test/outbox covers it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { getPrisma } from '../../lib/db/client.ts';
import { createJob, type CreateJobInput } from '../../lib/jobs/create-job.ts';
import { defineJob } from '../../lib/jobs/definition.ts';
import { createRegistry } from '../../lib/jobs/registry.ts';
import { InputValidationError, UnknownJobTypeError } from '../../lib/jobs/errors.ts';
import { CredentialModeNotAllowedError, IdempotencyConflictError } from '../../lib/jobs/creation-errors.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';
import { countRows, rawDb } from '../helpers/db.ts';
import { transitionsOf } from '../helpers/factories.ts';

const essayJob = defineJob({
  ...syntheticJob,
  jobType: 'essay_review',
  queue: { queueName: 'background', defaultPriority: 70, messageGroup: 'user' },
  execution: { ...syntheticJob.execution, timeoutMs: 120_000, maxRetries: 4 },
  input: { schemaVersion: 'essay-in-3' },
  output: { schemaVersion: 'essay-out-2' },
  prompt: { key: 'essay_review', version: 'v7' },
  model: { tier: 'reasoning' },
  credential: { allowedModes: ['platform_key', 'user_deepseek_key'], defaultMode: 'user_deepseek_key' },
  inputSchema: z.strictObject({ essay: z.string().min(1), apiKey: z.string().optional(), meta: z.record(z.string(), z.unknown()).optional() }),
});
const registry = createRegistry([syntheticJob, essayJob]);
const deps = { registry, eagerDispatch: null };

function request(overrides: Partial<CreateJobInput> = {}): CreateJobInput {
  return {
    userId: 'user-1', jobType: 'synthetic_job', triggerType: 'user', targetType: 'lesson', targetId: 'lesson-9',
    input: { prompt: 'Explain photosynthesis' }, ...overrides,
  };
}

async function rowCounts() {
  return { jobs: await countRows('AiJob'), snapshots: await countRows('AiJobSnapshot'), outbox: await countRows('OutboxEvent') };
}

describe('createJob', () => {
  it('commits the job, its snapshot and its enqueue outbox row together', async () => {
    const { job, created } = await createJob(request(), deps);
    expect(created).toBe(true);
    expect(job).toMatchObject({ lifecycleStatus: 'queued', userId: 'user-1', targetType: 'lesson', targetId: 'lesson-9', triggerType: 'user' });
    expect(job.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(await rowCounts()).toEqual({ jobs: 1, snapshots: 1, outbox: 1 });
    expect(await transitionsOf(job.id)).toMatchObject([{ fromStatus: null, toStatus: 'queued', actor: 'user:user-1' }]);
  });

  it('writes an outbox row whose payload is exactly {"jobId"} and whose dedupe key names the job', async () => {
    const { job } = await createJob(request(), deps);
    const [rows] = await (await rawDb()).query<import('mysql2').RowDataPacket[]>('SELECT * FROM OutboxEvent');
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    const payload = typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload;
    expect(payload).toEqual({ jobId: job.id });
    expect(row).toMatchObject({
      eventType: 'ai.job.enqueue', aggregateType: 'AiJob', aggregateId: job.id, dedupeKey: `ai.job.enqueue:${job.id}`,
      status: 'pending', attemptCount: 0, queueName: 'interactive', messageGroupId: job.id,
    });
  });

  it('copies queue, priority, attempts, timeout, schema, prompt and model metadata from the definition', async () => {
    const { job } = await createJob(request({ jobType: 'essay_review', input: { essay: 'My essay' } }), deps);
    expect(job).toMatchObject({
      queueName: 'background', priority: 70, maxAttempts: 5, timeoutMs: 120_000,
      inputSchemaVersion: 'essay-in-3', outputSchemaVersion: 'essay-out-2', promptKey: 'essay_review', promptVersion: 'v7',
      modelTier: 'reasoning', credentialMode: 'user_deepseek_key', attemptCount: 0, leaseVersion: 0, progress: 0,
    });
    const outbox = await getPrisma().outboxEvent.findFirstOrThrow();
    expect(outbox).toMatchObject({ queueName: 'background', messageGroupId: 'user-1' });
  });

  it('lets the caller override priority and pick an allowed credential mode, and refuses a disallowed one', async () => {
    const { job } = await createJob(request({ priority: 5 }), deps);
    expect(job.priority).toBe(5);
    await expect(createJob(request({ credentialMode: 'user_deepseek_key' }), deps)).rejects.toBeInstanceOf(CredentialModeNotAllowedError);
    expect((await rowCounts()).jobs).toBe(1);
  });

  it('stores a snapshot with secrets redacted, its hash and the redaction version', async () => {
    const essay = 'Use sk-abcdefghijklmnopqrstuvwx and Bearer abcdef.ghijkl.mnopqrstu please';
    const { job } = await createJob(request({ jobType: 'essay_review', input: { essay, apiKey: 'sk-live-0123456789abcdef', meta: { password: 'hunter2', note: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' } } }), deps);
    const snap = await getPrisma().aiJobSnapshot.findUniqueOrThrow({ where: { jobId: job.id } });
    const stored = JSON.stringify(snap.content);
    for (const secret of ['sk-abcdefghijklmnopqrstuvwx', 'sk-live-0123456789abcdef', 'hunter2', 'eyJhbGciOiJIUzI1NiJ9', 'abcdef.ghijkl.mnopqrstu']) {
      expect(stored).not.toContain(secret);
    }
    expect(stored).toContain('[REDACTED]');
    expect(snap).toMatchObject({ schemaVersion: 'essay-in-3', redactionVersion: 1 });
    expect(snap.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(job.inputHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('rejects input that fails the definition schema with field paths and writes nothing', async () => {
    const err = await createJob(request({ input: { prompt: '', extra: 1 } }), deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputValidationError);
    expect((err as InputValidationError).code).toBe('VALIDATION_FAILED');
    expect((err as InputValidationError).issues.map((i) => i.path)).toEqual(expect.arrayContaining(['prompt']));
    expect(await rowCounts()).toEqual({ jobs: 0, snapshots: 0, outbox: 0 });
  });

  it('rejects an unknown job type and writes nothing', async () => {
    await expect(createJob(request({ jobType: 'no_such_job' }), deps)).rejects.toBeInstanceOf(UnknownJobTypeError);
    expect(await rowCounts()).toEqual({ jobs: 0, snapshots: 0, outbox: 0 });
  });
});

describe('createJob idempotency on (userId, jobType, idempotencyKey)', () => {
  it('returns the existing job for a repeated key and writes nothing more', async () => {
    const first = await createJob(request({ idempotencyKey: 'k-1' }), deps);
    const again = await createJob(request({ idempotencyKey: 'k-1' }), deps);
    expect(again).toEqual({ job: first.job, created: false });
    expect(await rowCounts()).toEqual({ jobs: 1, snapshots: 1, outbox: 1 });
  });

  it('scopes the key by user and job type', async () => {
    await createJob(request({ idempotencyKey: 'k-1' }), deps);
    await createJob(request({ idempotencyKey: 'k-1', userId: 'user-2' }), deps);
    await createJob(request({ idempotencyKey: 'k-1', jobType: 'essay_review', input: { essay: 'x' } }), deps);
    expect((await rowCounts()).jobs).toBe(3);
  });

  it('refuses the same key with a different input', async () => {
    const first = await createJob(request({ idempotencyKey: 'k-2' }), deps);
    const err = await createJob(request({ idempotencyKey: 'k-2', input: { prompt: 'something else' } }), deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdempotencyConflictError);
    expect(err).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', existingJobId: first.job.id });
    expect((await rowCounts()).jobs).toBe(1);
  });

  it('creates exactly one job, snapshot and outbox row from 50 concurrent creates with one key', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => createJob(request({ idempotencyKey: 'race' }), deps)));
    const ids = new Set(results.map((r) => r.job.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await rowCounts()).toEqual({ jobs: 1, snapshots: 1, outbox: 1 });
  });

  it('without a key creates a new job every time', async () => {
    await createJob(request(), deps);
    await createJob(request(), deps);
    expect(await rowCounts()).toEqual({ jobs: 2, snapshots: 2, outbox: 2 });
  });
});

describe('createJob atomicity under injected database failures', () => {
  const triggers = ['fail_snapshot_insert', 'fail_outbox_insert'];
  afterEach(async () => {
    for (const t of triggers) await (await rawDb()).query(`DROP TRIGGER IF EXISTS ${t}`);
  });

  for (const [trigger, table] of [['fail_snapshot_insert', 'AiJobSnapshot'], ['fail_outbox_insert', 'OutboxEvent']] as const) {
    it(`leaves nothing behind when the ${table} insert fails`, async () => {
      await (await rawDb()).query(
        `CREATE TRIGGER ${trigger} BEFORE INSERT ON \`${table}\` FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure'`,
      );
      await expect(createJob(request({ idempotencyKey: 'atomic' }), deps)).rejects.toThrow();
      expect(await rowCounts()).toEqual({ jobs: 0, snapshots: 0, outbox: 0 });
      expect(await countRows('AiJobTransition')).toBe(0);
      // The key is still free: once the fault is gone the same request succeeds.
      await (await rawDb()).query(`DROP TRIGGER ${trigger}`);
      const { created } = await createJob(request({ idempotencyKey: 'atomic' }), deps);
      expect(created).toBe(true);
      expect(await rowCounts()).toEqual({ jobs: 1, snapshots: 1, outbox: 1 });
    });
  }
});

describe('createJob on the user\'s key if stored, and behind a guard', () => {
  /** A stored key row (createJob only reads its id and status; the ciphertext is never opened here). */
  async function storeKey(userId: string, id: string, status: 'active' | 'revoked' = 'active'): Promise<void> {
    await (await rawDb()).query(
      `INSERT INTO UserModelCredential (id, userId, provider, keyCiphertext, dataKeyCiphertext, iv, authTag, kmsKeyId, fingerprint, status, createdAt, updatedAt)
       VALUES (?, ?, 'deepseek', 'x', 'x', 'x', 'x', 'alias/test', 'fp', ?, NOW(3), NOW(3))`,
      [id, userId, status],
    );
  }
  const essay = (userId: string) => request({ userId, jobType: 'essay_review', input: { essay: 'Entropy rises.' }, userKeyIfStored: true });

  it('records the newest active key when one is stored, else the default mode, and returns the job as stored', async () => {
    await storeKey('user-1', '01J0000000000000000000000A');
    await storeKey('user-1', '01J0000000000000000000000B');
    await storeKey('user-1', '01J0000000000000000000000C', 'revoked');
    await storeKey('user-2', '01J0000000000000000000000D', 'revoked');
    const withKey = await createJob(essay('user-1'), deps);
    const without = await createJob({ ...essay('user-2'), jobType: 'synthetic_job', input: { prompt: 'x' }, userKeyIfStored: undefined }, deps);
    const revokedOnly = await createJob(essay('user-2'), deps);
    expect(withKey.job).toMatchObject({ credentialMode: 'user_deepseek_key', credentialId: '01J0000000000000000000000B' });
    expect(without.job).toMatchObject({ credentialMode: 'platform_key', credentialId: null });
    // essay_review's default mode is the user's key: with none active, the job records that mode and no key
    // (resolution then fails it with CREDENTIAL_INVALID, as for a job created before any key was stored).
    expect(revokedOnly.job).toMatchObject({ credentialMode: 'user_deepseek_key', credentialId: null });
    for (const { job } of [withKey, without, revokedOnly]) {
      expect(await getPrisma().aiJob.findUniqueOrThrow({ where: { id: job.id } })).toMatchObject({
        credentialMode: job.credentialMode, credentialId: job.credentialId,
      });
    }
  });

  it('refuses userKeyIfStored for a type that does not allow user keys, or together with an explicit credential', async () => {
    await expect(createJob(request({ userKeyIfStored: true }), deps)).rejects.toBeInstanceOf(CredentialModeNotAllowedError);
    await expect(createJob({ ...essay('user-1'), credentialMode: 'platform_key' }, deps)).rejects.toThrow(/excludes credentialMode/);
    expect(await rowCounts()).toEqual({ jobs: 0, snapshots: 0, outbox: 0 });
  });

  it('runs the guard first in the same transaction: when it fails, its error is thrown and nothing is written', async () => {
    const refuse = { sql: 'SELECT (SELECT 1 UNION ALL SELECT 1 FROM DUAL WHERE ? = 1) AS guarded', values: [1] };
    const pass = { ...refuse, values: [0] };
    await expect(createJob(request({ guard: refuse, idempotencyKey: 'guarded' }), deps)).rejects.toMatchObject({ errno: 1242 });
    expect(await rowCounts()).toEqual({ jobs: 0, snapshots: 0, outbox: 0 });
    expect(await countRows('AiJobTransition')).toBe(0);
    const { created } = await createJob(request({ guard: pass, idempotencyKey: 'guarded' }), deps);
    expect(created).toBe(true);
    expect(await rowCounts()).toEqual({ jobs: 1, snapshots: 1, outbox: 1 });
  });
});
