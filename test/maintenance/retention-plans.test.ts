/**
 * Retention's DELETEs reach their rows through the index they name, even on small tables whose statistics
 * favour a scan (lib/maintenance/batches.ts, `deleteByKeys`). A scanning DELETE under REPEATABLE READ keeps
 * every row and gap it read locked until its batch commits: job creation's outbox INSERT waits, and the
 * dispatcher's `SKIP LOCKED` claim skips every pending row.
 *
 * One retention pass over every kind of row (published and dead outbox rows, expired snapshots, rolled-up
 * ledger rows, revoked user keys, old jobs' stream chunks, an opted-in type's old jobs with a row in each table that refers to them) runs as a database
 * user of its own, in batches of 100 against tables of a few hundred rows; every DELETE it sent is read back
 * from the server's general log (values inlined: text protocol) and EXPLAINed.
 */
import type mysql from 'mysql2/promise';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient, getPrisma, type PrismaDb } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { jobDefinitions } from '../../lib/job-types/index.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';
import { defineJob } from '../../lib/jobs/definition.ts';
import { createRegistry } from '../../lib/jobs/registry.ts';
import { tablesReferencingJobs } from '../../lib/maintenance/job-deletion.ts';
import { DEFAULT_RETENTION } from '../../lib/maintenance/retention-config.ts';
import { runRetention } from '../../lib/maintenance/retention.ts';
import { rawDb, withStaleStatistics } from '../helpers/db.ts';
import { loggedUser, splitStatements } from '../helpers/general-log.ts';
import { queuedJobRow } from '../helpers/outbox-factories.ts';

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);

let logged: Awaited<ReturnType<typeof loggedUser>>;
let db: PrismaDb;

beforeAll(async () => {
  await rawDb();
  logged = await loggedUser(process.env.DATABASE_URL ?? '', `retention-plans:${process.pid}:${Date.now()}`);
  db = createPrismaClient(logged.url);
});

afterAll(async () => {
  await db?.$disconnect();
  await logged?.release();
});

/** Finished jobs of `jobType`, 40 days old, with a snapshot (expired or not) each. */
async function oldJobs(count: number, jobType: string, snapshotExpiresAt: Date | null): Promise<string[]> {
  // Ids minted when the jobs were created, as every job's is (stream-chunk retention ranges over them).
  const jobs = Array.from({ length: count }, () => ({
    ...queuedJobRow({ jobType, id: ulid(daysAgo(40).getTime()) }), lifecycleStatus: 'succeeded' as const, createdAt: daysAgo(40), finishedAt: daysAgo(40),
  }));
  await getPrisma().aiJob.createMany({ data: jobs });
  await getPrisma().aiJobSnapshot.createMany({
    data: jobs.map((j) => ({
      id: newId(), jobId: j.id, schemaVersion: 'v1', content: {}, contentHash: 'c'.repeat(64), redactionVersion: 1, expiresAt: snapshotExpiresAt,
    })),
  });
  return jobs.map((j) => j.id);
}

function outboxRows(count: number, status: 'published' | 'dead' | 'pending', ageDays: number, aggregateIds: string[] = []) {
  const at = daysAgo(ageDays);
  return Array.from({ length: count }, (_, i) => {
    const id = newId();
    return {
      id, eventType: 'ai.job.enqueue', aggregateType: 'AiJob', aggregateId: aggregateIds[i] ?? newId(), dedupeKey: `t:${id}`,
      payload: {}, status, availableAt: at, publishedAt: status === 'published' ? at : null, createdAt: at, updatedAt: at,
    };
  });
}

/** Every kind of row retention deletes, and the watermarks that let it (once: a second call only refills). */
async function seed(watermarks: boolean): Promise<void> {
  const prisma = getPrisma();
  // The opted-in type's old jobs (deleted) and another type's (kept, with expired snapshots), each with a row in
  // every table that refers to jobs: a batch of 100 ids then covers under half of each table.
  const doomed = await oldJobs(120, 'synthetic_job', null);
  const others = await oldJobs(150, 'feynman_evaluation', daysAgo(1));
  const all = [...doomed, ...others];
  await prisma.aiJobTransition.createMany({ data: all.map((jobId) => ({ id: newId(), jobId, toStatus: 'queued' as const, actor: 't' })) });
  await prisma.aiJobArtifact.createMany({ data: all.map((jobId) => ({ id: newId(), jobId, artifactType: 't', artifactId: jobId })) });
  const business = (jobId: string) => ({ id: newId(), jobId, userId: 'user-1' });
  await prisma.feynmanEvaluation.createMany({ data: all.map((jobId) => ({ ...business(jobId), concept: 'c', score: 1, gaps: [], feedback: 'f' })) });
  await prisma.quizQuestion.createMany({
    data: all.map((jobId) => ({ ...business(jobId), ordinal: 0, question: 'q', options: ['a', 'b'], answerIndex: 0, explanation: 'e', difficulty: 'easy' })),
  });
  await prisma.flashcard.createMany({ data: all.map((jobId) => ({ ...business(jobId), ordinal: 0, front: 'f', back: 'b' })) });
  await prisma.aiJobStreamChunk.createMany({
    data: all.flatMap((jobId) => [2, 3].map((seq) => ({ jobId, seq, attempt: 1, type: 'text' as const, field: 'f', content: 'x', createdAt: daysAgo(40) }))),
  });
  const ledger = (jobId: string, ageDays: number) => ({
    id: newId(), jobId, userId: 'user-1', attemptNo: 1, provider: 'mock', model: 'm', credentialMode: 'platform_key' as const,
    priceVersion: 'p', latencyMs: 1, createdAt: daysAgo(ageDays),
  });
  // Ledger rows: the doomed jobs' go with them; the others' are rolled up and past the ledger retention.
  await prisma.aiUsageLog.createMany({ data: [...doomed.map((jobId) => ledger(jobId, 40)), ...others.map((jobId) => ledger(jobId, 500))] });
  await prisma.outboxEvent.createMany({
    data: [...outboxRows(120, 'published', 3, doomed), ...outboxRows(200, 'published', 10), ...outboxRows(60, 'dead', 30), ...outboxRows(50, 'pending', 0)],
  });
  // User keys: revoked 40 days ago (deleted), revoked yesterday and active (kept).
  const key = (status: 'active' | 'revoked', revokedAt: Date | null) => ({
    id: newId(), userId: `user-${newId()}`, provider: 'deepseek', keyCiphertext: new Uint8Array([1]), dataKeyCiphertext: new Uint8Array([2]),
    iv: new Uint8Array(12), authTag: new Uint8Array(16), kmsKeyId: 'alias/test', fingerprint: 'fp', status, revokedAt,
  });
  await prisma.userModelCredential.createMany({
    data: [...Array.from({ length: 150 }, () => key('revoked', daysAgo(40))), ...Array.from({ length: 60 }, () => key('revoked', daysAgo(1))),
      ...Array.from({ length: 60 }, () => key('active', null))],
  });
  if (!watermarks) return;
  for (const name of ['finished_jobs', 'usage']) await prisma.aiRollupWatermark.create({ data: { name, coveredUntil: daysAgo(1), updatedAt: new Date() } });
}

describe('retention DELETEs', () => {
  it('reach their rows through the index they name on small tables with fresh statistics', { timeout: 60_000 }, async () => {
    const raw = await rawDb();
    const children = await tablesReferencingJobs(getPrisma());
    const tables = [...new Set(['OutboxEvent', 'AiJob', 'UserModelCredential', ...children.map((c) => c.table)])];
    await withStaleStatistics(tables, async () => {
      await seed(true);
      const registry = createRegistry([
        ...jobDefinitions.filter((d) => d.jobType !== syntheticJob.jobType),
        defineJob({ ...syntheticJob, retention: { snapshotDays: 30, deleteJobsAfterDays: 30 } }),
      ]);
      const counts = await runRetention(db, registry, { ...DEFAULT_RETENTION, batchSize: 100, outboxFailedDays: 7 }, new Date());
      expect(counts).toEqual({ outboxPublished: 200, outboxFailed: 60, snapshots: 150, usageLedger: 150, revokedCredentials: 150, streamChunks: 540, jobs: 120 });
      expect(await getPrisma().userModelCredential.count()).toBe(120);
      expect(await getPrisma().outboxEvent.count()).toBe(50); // the pending rows

      const deletes = (await logged.rows())
        .filter((r) => r.command === 'Query')
        .flatMap((r) => splitStatements(r.argument))
        .filter((s) => /^DELETE\b/.test(s));
      // EXPLAINed on tables refilled with as many rows again as the run started from: the rows the statements
      // name are gone, and the plan of an id list depends on the share of the table it covers.
      await seed(false);
      const seen = new Map<string, mysql.RowDataPacket>();
      for (const statement of deletes) {
        const [[plan]] = await raw.query<mysql.RowDataPacket[]>(`EXPLAIN ${statement}`);
        const [, table, index] = /^DELETE t FROM `(\w+)` t FORCE INDEX \(`(\w+)`\)/.exec(statement) ?? [];
        const why = `${JSON.stringify(plan)}\n${statement.slice(0, 300)}`;
        expect(index, `a DELETE without an index hint: ${why}`).toBeDefined();
        expect(plan?.key, why).toBe(index);
        expect(['range', 'ref', 'eq_ref', 'const'], why).toContain(plan?.type);
        seen.set(`${table} ${index}`, plan!);
      }
      process.stdout.write(`${[...seen].map(([k, p]) => `${k.padEnd(64)} type=${p.type} rows=${p.rows}`).join('\n')}\n`);
      // By primary key: outbox, snapshots, ledger rows and revoked keys, jobs; by foreign key: each table referring to jobs and the jobs' outbox rows.
      const expected = [
        'OutboxEvent PRIMARY', 'AiJobSnapshot PRIMARY', 'AiUsageLog PRIMARY', 'AiJob PRIMARY', 'UserModelCredential PRIMARY',
        'OutboxEvent OutboxEvent_aggregateType_aggregateId_idx', ...children.map((c) => `${c.table} ${c.index}`),
      ];
      expect([...seen.keys()].sort()).toEqual([...new Set(expected)].sort());
    });
  });
});
