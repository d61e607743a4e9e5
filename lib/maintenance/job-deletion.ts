/**
 * Opt-in deletion of finished jobs (a job type's `retention.deleteJobsAfterDays`): jobs are the product's data
 * and are never deleted otherwise. A deleted job takes its rows in every table that references AiJob with it
 * (snapshot, transitions, artifacts, usage ledger, the job type's business rows: found from the schema's
 * foreign keys, so a new job type's table needs no change here) and its settled outbox rows.
 *
 * Only jobs that are already in both rollups (finished before the finished-jobs watermark, and before the
 * usage watermark), have no retry (a child's parentJobId refers to them; the child goes first when it
 * qualifies) and no unsettled outbox row are chosen; the stats and usage reports are unchanged by a deletion.
 */
import type { PrismaDb, Prisma } from '../db/client.ts';
import type { JobDefinitionRegistry } from '../jobs/registry.ts';
import { readWatermark } from '../rollups/watermark.ts';
import { DAY_MS, minDate } from '../rollups/time-buckets.ts';
import { deleteInBatches, marks, selectIds, type BatchLoop } from './batches.ts';

const TERMINAL = "lifecycleStatus IN ('succeeded', 'failed', 'cancelled')";

/** Tables with a foreign key column to AiJob.id (other than AiJob's own parentJobId). */
export async function tablesReferencingJobs(db: PrismaDb): Promise<{ table: string; column: string }[]> {
  const rows = await db.$queryRawUnsafe<{ t: string; c: string }[]>(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.KEY_COLUMN_USAGE
     WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME = 'AiJob' AND TABLE_NAME <> 'AiJob' ORDER BY TABLE_NAME`,
  );
  return rows.map((r) => ({ table: r.t, column: r.c }));
}

/** Deletes the opted-in job types' jobs that finished long enough ago; returns jobs deleted. */
export async function deleteExpiredJobs(db: PrismaDb, registry: JobDefinitionRegistry, loop: BatchLoop, now: Date): Promise<number> {
  const optedIn = registry.getAll().filter((d) => d.retention.deleteJobsAfterDays !== undefined);
  if (optedIn.length === 0) return 0;
  const [finished, usage] = await Promise.all([readWatermark(db, 'finished_jobs'), readWatermark(db, 'usage')]);
  if (!finished || !usage) return 0;
  const children = await tablesReferencingJobs(db);
  let deleted = 0;
  // A job finished before the cutoff was created before it: `createdAt < cutoff` bounds the read to a range of
  // the (jobType, lifecycleStatus, createdAt) index — the type's old jobs, not all of its history.
  for (const def of optedIn) {
    const cutoff = minDate(new Date(now.getTime() - (def.retention.deleteJobsAfterDays as number) * DAY_MS), minDate(finished, usage));
    deleted += await deleteInBatches(db, loop,
      (limit) => selectIds(db,
        `SELECT j.id FROM \`AiJob\` j WHERE j.jobType = ? AND j.${TERMINAL} AND j.createdAt < ? AND j.finishedAt < ?
           AND NOT EXISTS (SELECT 1 FROM \`AiJob\` c WHERE c.parentJobId = j.id)
           AND NOT EXISTS (SELECT 1 FROM \`OutboxEvent\` o WHERE o.aggregateType = 'AiJob' AND o.aggregateId = j.id AND o.status IN ('pending', 'processing'))
         LIMIT ${limit}`, def.jobType, cutoff, cutoff),
      (tx, ids) => deleteJobs(tx, children, ids, cutoff));
  }
  return deleted;
}

async function deleteJobs(
  tx: Prisma.TransactionClient, children: { table: string; column: string }[], ids: string[], cutoff: Date,
): Promise<number> {
  const inIds = `IN (${marks(ids.length)})`;
  for (const { table, column } of children) await tx.$executeRawUnsafe(`DELETE FROM \`${table}\` WHERE \`${column}\` ${inIds}`, ...ids);
  await tx.$executeRawUnsafe(
    `DELETE FROM \`OutboxEvent\` WHERE aggregateType = 'AiJob' AND aggregateId ${inIds} AND status NOT IN ('pending', 'processing')`, ...ids,
  );
  return tx.$executeRawUnsafe(`DELETE FROM \`AiJob\` WHERE id ${inIds} AND ${TERMINAL} AND finishedAt < ?`, ...ids, cutoff);
}
