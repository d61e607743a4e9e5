/**
 * The API's read queries on jobs. Owner checks live here so every user route applies them the same way:
 * another user's job is reported exactly like a missing one (JOB_NOT_FOUND), never as forbidden.
 */
import type { AiJob, Db } from '../db/client.ts';
import { findJobWaits, type JobWait } from '../capacity/waits-repository.ts';
import { JobNotFoundError } from '../jobs/lifecycle-errors.ts';
import { pageOfJobIds, type JobListFilter } from './job-list-query.ts';
import { toPage, type Page, type PagePosition } from './pagination.ts';
import type { AdminJobListQuery, UserJobListQuery } from './request-schemas.ts';
import { JOB_RESULT_READERS } from './job-results.ts';
import type { AdminJobRelations, ArtifactRow } from './views.ts';

/**
 * The job, when it exists and belongs to `userId` (and is of `jobType`, when given).
 * @throws JobNotFoundError otherwise — the same error for all three cases
 */
export async function findOwnedJob(db: Db, jobId: string, userId: string, jobType?: string): Promise<AiJob> {
  const job = await db.aiJob.findUnique({ where: { id: jobId } });
  if (!job || job.userId !== userId || (jobType !== undefined && job.jobType !== jobType)) throw new JobNotFoundError(jobId);
  return job;
}

/** @throws JobNotFoundError when there is no such job */
export async function findJob(db: Db, jobId: string): Promise<AiJob> {
  const job = await db.aiJob.findUnique({ where: { id: jobId } });
  if (!job) throw new JobNotFoundError(jobId);
  return job;
}

/** Artifacts of succeeded jobs, by job id (other jobs have none worth reading). */
export async function artifactsByJob(db: Db, jobs: readonly AiJob[]): Promise<Map<string, ArtifactRow[]>> {
  const ids = jobs.filter((j) => j.lifecycleStatus === 'succeeded').map((j) => j.id);
  const byJob = new Map<string, ArtifactRow[]>();
  if (ids.length === 0) return byJob;
  const rows = await db.aiJobArtifact.findMany({
    where: { jobId: { in: ids } },
    select: { jobId: true, artifactType: true, artifactId: true, ordinal: true },
    orderBy: [{ jobId: 'asc' }, { ordinal: 'asc' }],
  });
  for (const { jobId, ...artifact } of rows) {
    const list = byJob.get(jobId) ?? [];
    list.push(artifact);
    byJob.set(jobId, list);
  }
  return byJob;
}

/** A job with its artifacts, as the status views need it. */
export async function withArtifacts(db: Db, job: AiJob): Promise<{ job: AiJob; artifacts: ArtifactRow[] }> {
  return { job, artifacts: (await artifactsByJob(db, [job])).get(job.id) ?? [] };
}

/** A page of the caller's jobs, newest first. */
export async function listUserJobs(db: Db, userId: string, query: UserJobListQuery): Promise<Page<{ job: AiJob; artifacts: ArtifactRow[] }>> {
  return listJobs(db, { userId, lifecycleStatus: query.status, jobType: query.jobType }, query);
}

/** A page of all jobs matching the admin filters, newest first. */
export async function listAllJobs(db: Db, query: AdminJobListQuery): Promise<Page<{ job: AiJob; artifacts: ArtifactRow[] }>> {
  return listJobs(db, {
    userId: query.userId, lifecycleStatus: query.status, jobType: query.jobType, queueName: query.queueName,
    errorCode: query.errorCode,
    createdFrom: query.createdFrom ? new Date(query.createdFrom) : undefined,
    createdTo: query.createdTo ? new Date(query.createdTo) : undefined,
  }, query);
}

/**
 * One page, newest first: the ids from one in-order index read (./job-list-query.ts), then those rows by
 * primary key, then their artifacts.
 */
async function listJobs(
  db: Db, filter: JobListFilter, page: { limit: number; cursor?: PagePosition | undefined },
): Promise<Page<{ job: AiJob; artifacts: ArtifactRow[] }>> {
  const ids = await pageOfJobIds(db, filter, page.cursor, page.limit + 1);
  const found = ids.length === 0 ? [] : await db.aiJob.findMany({ where: { id: { in: ids } } });
  const byId = new Map(found.map((job) => [job.id, job]));
  // In the ids' order; a job deleted between the two reads (opt-in retention) is simply not listed.
  const rows = ids.flatMap((id) => byId.get(id) ?? []);
  const artifacts = await artifactsByJob(db, rows.slice(0, page.limit));
  return toPage(rows, ids.length, page.limit, (job) => ({ job, artifacts: artifacts.get(job.id) ?? [] }));
}

/**
 * Everything the admin detail shows beside the job: artifacts, transitions (oldest first), usage rows, the
 * snapshot, for a succeeded job its business rows (read as its type's result route reads them) and, for a job
 * parked between deliveries, why it waits (lib/capacity/waits-repository.ts). Each is one indexed read by job id.
 */
export async function adminJobRelations(db: Db, job: AiJob): Promise<AdminJobRelations> {
  const reader = job.lifecycleStatus === 'succeeded' ? JOB_RESULT_READERS.get(job.jobType) : undefined;
  const parked = job.lifecycleStatus === 'running' && job.lockedBy === null;
  const [artifacts, transitions, usage, snapshot, businessRows, waits] = await Promise.all([
    artifactsByJob(db, [job]),
    db.aiJobTransition.findMany({
      where: { jobId: job.id },
      orderBy: { id: 'asc' },
      select: { fromStatus: true, toStatus: true, actor: true, reason: true, errorCode: true, leaseVersion: true, createdAt: true },
    }),
    db.aiUsageLog.findMany({
      where: { jobId: job.id },
      orderBy: [{ attemptNo: 'asc' }, { id: 'asc' }],
      select: {
        attemptNo: true, promptTokens: true, completionTokens: true, totalTokens: true, costUsd: true, model: true, provider: true,
        latencyMs: true, errorCode: true,
      },
    }),
    db.aiJobSnapshot.findUnique({
      where: { jobId: job.id },
      select: { content: true, schemaVersion: true, redactionVersion: true, createdAt: true, expiresAt: true },
    }),
    reader ? reader.read(db, job).catch(nullWhenDeleted) : Promise.resolve(null),
    parked ? findJobWaits([job.id]) : Promise.resolve(new Map<string, JobWait>()),
  ]);
  return {
    artifacts: artifacts.get(job.id) ?? [], transitions, usage, snapshot,
    businessRows: (businessRows as Record<string, unknown> | null) ?? null,
    wait: waits.get(job.id) ?? null,
  };
}

/** A business row deleted since (Prisma P2025 from a reader's findUniqueOrThrow) reads as none; anything else is thrown. */
function nullWhenDeleted(err: unknown): null {
  if ((err as { code?: unknown }).code === 'P2025') return null;
  throw err;
}
