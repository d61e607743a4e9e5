/**
 * Retention deletes exactly what it should and nothing else, in small batches, while the local runtime's
 * dispatcher and consumers run new jobs through the same tables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import type { OutboxStatus } from '../../lib/db/generated/enums.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';
import { defineJob } from '../../lib/jobs/definition.ts';
import { createRegistry, jobRegistry } from '../../lib/jobs/registry.ts';
import { jobDefinitions } from '../../lib/job-types/index.ts';
import { DEFAULT_RETENTION, type RetentionConfig } from '../../lib/maintenance/retention-config.ts';
import { runRetention } from '../../lib/maintenance/retention.ts';
import { maintenanceDepsFromEnv, runMaintenance } from '../../lib/maintenance/maintenance-run.ts';
import { handler as maintenanceHandler } from '../../functions/maintenance.ts';
import type { ScheduledEvent } from 'aws-lambda';
import { ulid } from 'ulid';
import { readStreamPage } from '../../lib/stream/stream-log.ts';
import { insertJob } from '../helpers/factories.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';

let e: E2e;
beforeAll(async () => {
  e = await startE2e({ maintenanceIntervalMs: 3_600_000 });
});
afterAll(async () => e?.stop());

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);
const db = () => getPrisma();
/** Tiny batches: every kind of row takes several. */
const CONFIG: RetentionConfig = { ...DEFAULT_RETENTION, batchSize: 4 };

async function outboxRow(status: OutboxStatus, settledDaysAgo: number, aggregateId = newId()): Promise<string> {
  const id = newId();
  const at = daysAgo(settledDaysAgo);
  await db().outboxEvent.create({
    data: {
      id, eventType: 'ai.job.enqueue', aggregateType: 'AiJob', aggregateId, dedupeKey: `t:${id}`, payload: {}, status,
      availableAt: at, publishedAt: status === 'published' ? at : null, createdAt: at, updatedAt: at,
    },
  });
  return id;
}

async function snapshotFor(jobId: string, expiresAt: Date | null): Promise<void> {
  await db().aiJobSnapshot.create({
    data: { id: newId(), jobId, schemaVersion: 'v1', content: { text: 'learner text' }, contentHash: 'c'.repeat(64), redactionVersion: 1, expiresAt },
  });
}

/** Jobs created over HTTP and run to success while `during` runs; all must succeed. */
async function withTraffic<T>(during: () => Promise<T>): Promise<T> {
  const creating = Promise.all(Array.from({ length: 12 }, async (_, i) => {
    const token = await e.token(`busy-user-${i}`);
    const res = await e.api('POST', '/api/ai/quiz-generations', { token, body: { sourceText: `Fact ${i}.`, count: 2, difficulty: 'easy' } });
    expect(res.status).toBe(202);
    return e.waitForTerminal(res.body.jobId, token, 60_000);
  }));
  const [result, finished] = await Promise.all([during(), creating]);
  expect(finished.map((j) => j.lifecycleStatus)).toEqual(Array(12).fill('succeeded'));
  return result;
}

describe('retention', () => {
  it('deletes old published outbox rows and expired snapshots of finished jobs, keeps everything else', async () => {
    const oldPublished = await Promise.all(Array.from({ length: 11 }, () => outboxRow('published', 10)));
    const kept = await Promise.all([outboxRow('published', 2), outboxRow('failed', 30), outboxRow('dead', 30), outboxRow('pending', 10)]);
    const expired = await Promise.all(Array.from({ length: 9 }, async () => (await insertJob({ lifecycleStatus: 'succeeded' })).id));
    for (const id of expired) await snapshotFor(id, daysAgo(1));
    const running = await insertJob({ lifecycleStatus: 'running' });
    await snapshotFor(running.id, daysAgo(1));
    const fresh = await insertJob({ lifecycleStatus: 'failed' });
    await snapshotFor(fresh.id, new Date(Date.now() + DAY));
    const legacy = await insertJob({ lifecycleStatus: 'failed' });
    await snapshotFor(legacy.id, null);

    const counts = await withTraffic(() => runRetention(db(), jobRegistry, CONFIG, new Date()));

    expect(counts).toMatchObject({ outboxPublished: 11, outboxFailed: 0, snapshots: 9, usageLedger: 0, jobs: 0 });
    expect(await db().outboxEvent.count({ where: { id: { in: oldPublished } } })).toBe(0);
    expect(await db().outboxEvent.count({ where: { id: { in: kept } } })).toBe(4);
    expect(await db().aiJobSnapshot.count({ where: { jobId: { in: expired } } })).toBe(0);
    expect(await db().aiJobSnapshot.count({ where: { jobId: { in: [running.id, fresh.id, legacy.id] } } })).toBe(3);
    expect(await db().aiJob.count({ where: { id: { in: expired } } })).toBe(9);
  }, 120_000);

  it('deletes failed and dead outbox rows only when configured, and rolled-up usage rows past the ledger retention', async () => {
    const failed = await Promise.all([outboxRow('failed', 30), outboxRow('dead', 30), outboxRow('dead', 1)]);
    const job = await insertJob({ lifecycleStatus: 'succeeded' });
    const ledger = async (ageDays: number) => {
      const id = newId();
      await db().aiUsageLog.create({
        data: { id, jobId: job.id, userId: job.userId, attemptNo: 1, provider: 'mock', model: 'm', credentialMode: 'platform_key', priceVersion: 'p', latencyMs: 1, createdAt: daysAgo(ageDays) },
      });
      return id;
    };
    const rolledUp = await Promise.all(Array.from({ length: 6 }, () => ledger(500)));
    const notRolledUp = await ledger(420);
    const recent = await ledger(10);
    await db().aiRollupWatermark.create({ data: { name: 'usage', coveredUntil: daysAgo(450), updatedAt: new Date() } });

    const counts = await withTraffic(() => runRetention(db(), jobRegistry, { ...CONFIG, outboxFailedDays: 7 }, new Date()));

    expect(counts).toMatchObject({ outboxFailed: 2, usageLedger: 6 });
    expect((await db().outboxEvent.findMany({ where: { id: { in: failed } } })).map((r) => r.id)).toEqual([failed[2]]);
    expect(await db().aiUsageLog.count({ where: { id: { in: rolledUp } } })).toBe(0);
    expect(await db().aiUsageLog.count({ where: { id: { in: [notRolledUp, recent] } } })).toBe(2);
  }, 120_000);

  it('deletes user keys revoked past the retention, never an active key or a recent revocation, and keeps them all on keep', async () => {
    const key = async (status: 'active' | 'revoked', revokedDaysAgo: number | null, userId = 'user-keys') => {
      const id = newId();
      await db().userModelCredential.create({
        data: {
          id, userId, provider: 'deepseek', keyCiphertext: new Uint8Array([1]), dataKeyCiphertext: new Uint8Array([2]),
          iv: new Uint8Array(12), authTag: new Uint8Array(16), kmsKeyId: 'alias/test', fingerprint: 'fp', status,
          revokedAt: revokedDaysAgo === null ? null : daysAgo(revokedDaysAgo), createdAt: daysAgo(60),
        },
      });
      return id;
    };
    const old = await Promise.all(Array.from({ length: 6 }, (_, i) => key('revoked', 31 + i, `user-keys-${i}`)));
    const recent = await key('revoked', 29);
    const active = await key('active', null);

    expect((await runRetention(db(), jobRegistry, { ...CONFIG, revokedCredentialDays: null }, new Date())).revokedCredentials).toBe(0);
    expect(await db().userModelCredential.count({ where: { id: { in: old } } })).toBe(6);

    const counts = await withTraffic(() => runRetention(db(), jobRegistry, CONFIG, new Date()));
    expect(counts.revokedCredentials).toBe(6);
    expect((await db().userModelCredential.findMany({ where: { id: { in: [...old, recent, active] } }, orderBy: { id: 'asc' } })).map((r) => r.id))
      .toEqual([recent, active].sort());
  }, 120_000);

  it("starts no step past the run's deadline: the Lambda's remaining time less its reserve, when that comes before the budget", async () => {
    const old = await Promise.all(Array.from({ length: 3 }, () => outboxRow('published', 30)));
    const { logger: _logger, ...rest } = maintenanceDepsFromEnv();
    const deps = { ...rest, config: CONFIG, logger: { info: () => undefined } };
    // 10 s left is less than the 20 s reserve: the handler's deadline has passed, so it starts nothing.
    const late = await maintenanceHandler({} as ScheduledEvent, { getRemainingTimeInMillis: () => 10_000 });
    expect(late.retention.outboxPublished).toBe(0);
    expect(await runMaintenance(deps, { deadline: Date.now() - 1 })).toMatchObject({ rollupSteps: { finishedJobs: 0, usage: 0 }, retention: { outboxPublished: 0 } });
    expect(await db().outboxEvent.count({ where: { id: { in: old } } })).toBe(3);
    // With time left, the same run does the work.
    expect((await runMaintenance(deps, { deadline: Date.now() + 60_000 })).retention.outboxPublished).toBeGreaterThanOrEqual(3);
    expect(await db().outboxEvent.count({ where: { id: { in: old } } })).toBe(0);
  }, 120_000);

  it('deletes old finished jobs of an opted-in type with every row that refers to them, and nothing of other types', async () => {
    const registry = createRegistry([
      ...jobDefinitions.filter((d) => d.jobType !== syntheticJob.jobType),
      defineJob({ ...syntheticJob, retention: { snapshotDays: 30, deleteJobsAfterDays: 30 } }),
    ]);
    const old = async (jobType = 'synthetic_job', parentJobId?: string) => {
      // Created before it finished, as every job is (the deletion's read is a range of createdAt).
      const job = await insertJob({ jobType, lifecycleStatus: 'succeeded', createdAt: daysAgo(40), finishedAt: daysAgo(40), parentJobId });
      await snapshotFor(job.id, daysAgo(10));
      await db().aiJobTransition.create({ data: { id: newId(), jobId: job.id, toStatus: 'queued', actor: 't' } });
      await db().aiJobArtifact.create({ data: { id: newId(), jobId: job.id, artifactType: 't', artifactId: job.id } });
      await outboxRow('published', 40, job.id);
      return job.id;
    };
    const doomed = await Promise.all(Array.from({ length: 7 }, () => old()));
    const parent = await old();
    const child = await insertJob({ lifecycleStatus: 'queued', parentJobId: parent });
    const otherType = await old('feynman_evaluation');
    const recent = (await insertJob({ lifecycleStatus: 'succeeded', createdAt: daysAgo(45), finishedAt: daysAgo(5) })).id;
    for (const name of ['finished_jobs', 'usage']) await db().aiRollupWatermark.create({ data: { name, coveredUntil: daysAgo(1), updatedAt: new Date() } });

    const counts = await withTraffic(() => runRetention(db(), registry, CONFIG, new Date()));

    expect(counts.jobs).toBe(7);
    expect(await db().aiJob.count({ where: { id: { in: doomed } } })).toBe(0);
    for (const table of ['aiJobSnapshot', 'aiJobTransition', 'aiJobArtifact'] as const) {
      expect(await (db()[table] as any).count({ where: { jobId: { in: doomed } } }), table).toBe(0);
    }
    expect(await db().outboxEvent.count({ where: { aggregateId: { in: doomed } } })).toBe(0);
    expect(await db().aiJob.count({ where: { id: { in: [parent, child.id, otherType, recent] } } })).toBe(4);
    expect(await db().aiJobTransition.count({ where: { jobId: { in: [parent, otherType] } } })).toBe(2);
  }, 120_000);

  it('deletes the stream chunks of jobs finished longer ago than streamDays, keeps their status entries, and keeps everything on keep', async () => {
    /** A job created and finished as said, with a status entry at seq 1 and 2, and `chunks` chunks after them. */
    const withLog = async (state: 'succeeded' | 'running', createdDaysAgo: number, finishedDaysAgo: number | null, chunks = 3) => {
      const job = await insertJob({
        id: ulid(daysAgo(createdDaysAgo).getTime()), lifecycleStatus: state, createdAt: daysAgo(createdDaysAgo),
        ...(finishedDaysAgo === null ? {} : { finishedAt: daysAgo(finishedDaysAgo) }), statusSeq: 2 + chunks + (state === 'running' ? 0 : 1),
      });
      await db().aiJobTransition.createMany({
        data: [1, 2].map((seq) => ({ id: newId(), jobId: job.id, toStatus: seq === 1 ? 'queued' as const : 'running' as const, actor: 't', seq, attempt: seq - 1 })),
      });
      await db().aiJobStreamChunk.createMany({
        data: Array.from({ length: chunks }, (_, i) => ({ jobId: job.id, seq: 3 + i, attempt: 1, type: 'text' as const, field: 'f', content: `c${i}`, createdAt: daysAgo(createdDaysAgo) })),
      });
      if (state !== 'running') await db().aiJobTransition.create({ data: { id: newId(), jobId: job.id, fromStatus: 'running', toStatus: state, actor: 't', seq: 3 + chunks, attempt: 1 } });
      return job.id;
    };
    const old = await Promise.all(Array.from({ length: 5 }, () => withLog('succeeded', 10, 9)));
    const finishedLately = await withLog('succeeded', 10, 2);
    const stillRunning = await withLog('running', 10, null);
    const recent = await withLog('succeeded', 0, 0);
    const chunksOf = (ids: string[]) => db().aiJobStreamChunk.count({ where: { jobId: { in: ids } } });

    expect((await runRetention(db(), jobRegistry, { ...CONFIG, streamDays: null }, new Date())).streamChunks).toBe(0);
    const counts = await withTraffic(() => runRetention(db(), jobRegistry, CONFIG, new Date()));

    expect(counts.streamChunks).toBe(15);
    expect(await chunksOf(old)).toBe(0);
    expect(await chunksOf([finishedLately, stillRunning, recent])).toBe(9);
    expect(await db().aiJobTransition.count({ where: { jobId: { in: old } } })).toBe(15);
    // The finished job's log is its status entries now: one page, the deleted chunks' seqs stepped over.
    const page = (await readStreamPage(old[0]!, 0))!.page;
    expect(page.entries.map((e) => [e.seq, e.type === 'status' ? e.status : e.type])).toEqual([[1, 'queued'], [2, 'running'], [6, 'succeeded']]);
    expect(page).toMatchObject({ lastSeq: 6, hasMore: false, terminal: true });
  }, 120_000);
});
