/** The remaining failure codes and the user's own key, through the engine. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { getPrisma } from '../../lib/db/client.ts';
import { runJob } from '../../lib/engine/run-job.ts';
import { internalDetail } from '../../lib/engine/settle.ts';
import { ProviderUnavailableError, ReferenceValidationError } from '../../lib/jobs/failures.ts';
import type { ResultProjector } from '../../lib/jobs/projector.ts';
import { createKmsClient } from '../../lib/credentials/aws-clients.ts';
import { storeUserKey } from '../../lib/credentials/user-credential-repository.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';
import { insertJob, transitionsOf } from '../helpers/factories.ts';

const db = getPrisma();
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ registry: testRegistry(), providerTimeoutMs: 500 });
});
afterAll(async () => h.close());

const messageOf = (job: { id: string; jobType: string; createdAt: Date }) => ({
  jobId: job.id, jobType: job.jobType, idempotencyKey: `ai.job.enqueue:${job.id}`, createdAt: job.createdAt.toISOString(),
});

describe('failure codes', () => {
  it('PROVIDER_TIMEOUT when the provider is slower than its request deadline (retryable)', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'slow provider', scenario: 'slow:2000' } });
    expect(await runJob(messageOf(created), h.engine)).toMatchObject({ kind: 'retry', code: 'PROVIDER_TIMEOUT' });
    expect(await db.aiUsageLog.findFirst({ where: { jobId: created.id } })).toMatchObject({ errorCode: 'PROVIDER_TIMEOUT' });
  });

  it('REFERENCE_VALIDATION from a projector fails the job without a retry', async () => {
    const projector: ResultProjector = { key: 'synthetic', project: async () => { throw new ReferenceValidationError('lesson 42 does not exist'); } };
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'refers to nothing' } });
    const outcome = await runJob(messageOf(created), { ...h.engine, projectors: { get: () => projector } });
    expect(outcome).toMatchObject({ kind: 'failed', code: 'REFERENCE_VALIDATION' });
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'failed', attemptCount: 1, publicErrorMessage: 'The AI answer referred to unknown data' });
  });

  it('UNKNOWN_JOB_TYPE: a queued job whose type is no longer registered fails before any attempt', async () => {
    const orphan = await insertJob({ jobType: 'retired_job_type' });
    expect(await runJob(messageOf(orphan), h.engine)).toEqual({ kind: 'failed', jobId: orphan.id, code: 'UNKNOWN_JOB_TYPE' });
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: orphan.id } })).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'UNKNOWN_JOB_TYPE', attemptCount: 0 });
    expect((await transitionsOf(orphan.id)).map((t) => `${t.fromStatus}->${t.toStatus}`)).toEqual(['queued->failed']);
  });
});

describe("the user's own DeepSeek key", () => {
  it('is decrypted with KMS and is the key the provider call carries', async () => {
    const userKey = 'sk-user0wnkey0123456789abcdefghij';
    const jobId = await runOnOwnKey(userKey, userKey);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: jobId } })).toMatchObject({ lifecycleStatus: 'succeeded', modelProvider: 'deepseek' });
    expect(await db.aiUsageLog.findFirst({ where: { jobId } })).toMatchObject({ provider: 'deepseek', credentialMode: 'user_deepseek_key', errorCode: null });
  });
});

/**
 * One Feynman job of user-1 on their own stored key `userKey` (KMS-sealed), delivered once to a mock DeepSeek
 * that takes only `vendorKey`; resolves to the job's id.
 */
async function runOnOwnKey(userKey: string, vendorKey: string): Promise<string> {
  const kms = createKmsClient();
  const { KeyMetadata } = await kms.send(new CreateKeyCommand({ Description: 'engine test' }));
  const own = await startEngineHarness({ realCredentials: true, deepseek: { apiKey: vendorKey } });
  try {
    await storeUserKey(db, { userId: 'user-1', provider: 'deepseek', apiKey: userKey, kmsKeyId: KeyMetadata!.KeyId! }, { kms });
    const created = await own.create({
      jobType: 'feynman_evaluation', credentialMode: 'user_deepseek_key',
      input: { concept: 'Entropy', explanation: 'Disorder tends to increase.' },
    });
    await own.deliver();
    return created.id;
  } finally {
    await own.close();
  }
}

describe("a refused user key that the provider's error text quotes", () => {
  it('fails CREDENTIAL_INVALID, and the admin detail says why without the key', async () => {
    // Not sk-shaped, so only the provider's exact-key scrub can catch it (the pattern redaction does not).
    const userKey = 'own-key-Qz7Lm2Np9Rt4Vw6Xy8';
    const jobId = await runOnOwnKey(userKey, 'the-only-key-the-vendor-takes');
    const done = await db.aiJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(done).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'CREDENTIAL_INVALID' });
    // The mock vendor quotes a refused key (test/ai/openai-compatible-provider.test.ts); what the job stores
    // for admins keeps the reason and drops the key.
    expect(done.internalErrorMessage).toContain('Incorrect API key provided: [REDACTED]');
    const stored = JSON.stringify([done, await transitionsOf(jobId), await db.aiUsageLog.findMany({ where: { jobId } })]);
    expect(stored).not.toContain(userKey);
  });
});

describe('the admin detail of a failure', () => {
  it('redacts key- and token-shaped text anywhere in the cause chain, and keeps the rest', () => {
    const vendor = new Error('upstream refused Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123 for sk-proj0123456789abcdefXYZ');
    const detail = internalDetail(new ProviderUnavailableError('mock answered 502', { cause: new Error('gateway error', { cause: vendor }) }));
    expect(detail).toBe('mock answered 502 | caused by Error: gateway error | caused by Error: upstream refused Authorization: Bearer [REDACTED] for [REDACTED]');
  });
});

describe('a cancel requested between attempts', () => {
  it('ends the job cancelled when its next delivery arrives, without calling the provider', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'retry me', scenario: 'server_error' } });
    expect(await runJob(messageOf(created), h.engine)).toMatchObject({ kind: 'retry' });
    await db.aiJob.update({ where: { id: created.id }, data: { cancelRequestedAt: new Date() } });
    const calls = h.mock.requests.length;
    expect(await runJob(messageOf(created), h.engine)).toEqual({ kind: 'cancelled', jobId: created.id });
    expect(h.mock.requests.length).toBe(calls);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'cancelled', errorCode: 'CANCELLED' });
  });
});
