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
import { deleteByKeys, deleteInBatches, selectIds, type BatchLoop, type KeyedTable } from './batches.ts';

const TERMINAL = "lifecycleStatus IN ('succeeded', 'failed', 'cancelled')";

/**
 * Tables with a foreign key column to AiJob.id (other than AiJob's own parentJobId), each with an index that
 * leads with that column (InnoDB keeps one for every foreign key).
 */
export async function tablesReferencingJobs(db: PrismaDb): Promise<KeyedTable[]> {
  const rows = await db.$queryRawUnsafe<{ t: string; c: string; i: string | null }[]>(
    `SELECT k.TABLE_NAME AS t, k.COLUMN_NAME AS c, MIN(s.INDEX_NAME) AS i
     FROM information_schema.KEY_COLUMN_USAGE k
     LEFT JOIN information_schema.STATISTICS s
       ON s.TABLE_SCHEMA = k.TABLE_SCHEMA AND s.TABLE_NAME = k.TABLE_NAME AND s.COLUMN_NAME = k.COLUMN_NAME AND s.SEQ_IN_INDEX = 1
     WHERE k.TABLE_SCHEMA = DATABASE() AND k.REFERENCED_TABLE_NAME = 'AiJob' AND k.TABLE_NAME <> 'AiJob'
     GROUP BY k.TABLE_NAME, k.COLUMN_NAME ORDER BY k.TABLE_NAME`,
  );
  return rows.map((r) => {
    if (!r.i) throw new Error(`${r.t}.${r.c} refers to AiJob but no index leads with it`);
    return { table: r.t, column: r.c, index: r.i };
  });
}

/** A job's outbox rows, by (aggregateType, aggregateId). */
const JOB_OUTBOX: KeyedTable = { table: 'OutboxEvent', column: 'aggregateId', index: 'OutboxEvent_aggregateType_aggregateId_idx' };
const JOBS: KeyedTable = { table: 'AiJob', column: 'id', index: 'PRIMARY' };

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

async function deleteJobs(tx: Prisma.TransactionClient, children: KeyedTable[], ids: string[], cutoff: Date): Promise<number> {
  for (const child of children) await deleteByKeys(tx, child, ids);
  await deleteByKeys(tx, JOB_OUTBOX, ids, "aggregateType = 'AiJob' AND status NOT IN ('pending', 'processing')");
  return deleteByKeys(tx, JOBS, ids, `${TERMINAL} AND finishedAt < ?`, cutoff);
}
