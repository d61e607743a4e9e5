/**
 * The job lists' one query: the ids of a page, newest first, read from an index in order (issue 12).
 *
 * Lists are ordered by (createdAt DESC, id DESC) and continue strictly after the cursor's position. Each
 * combination of filters is served by the index whose leading columns are its most selective equality
 * filters and whose last column is createdAt (InnoDB appends the id): the server walks it backwards from the
 * cursor (or the createdTo bound) and stops after `limit + 1` matching rows, whatever the table holds. Other
 * filters (job type alone, queue, error code) are checked on the rows walked.
 *
 * The index is named (FORCE INDEX) rather than left to the optimizer: MariaDB 10.11, given an equality on a
 * common value (status `succeeded`) plus a createdAt bound, chooses `ref` access on the status alone and reads
 * back from the newest row, so a later page or a createdTo filter read every newer row of that status
 * (97,000 reads for a page of 20 at 300,000 jobs). Forced, it takes the range and reads the page.
 * test/db/query-plans.test.ts EXPLAINs every shape; docs/data-at-scale.md lists them.
 */
import type { Db } from '../db/client.ts';
import type { PagePosition } from './pagination.ts';

export interface JobListFilter {
  userId?: string | undefined;
  lifecycleStatus?: string | undefined;
  jobType?: string | undefined;
  queueName?: string | undefined;
  errorCode?: string | undefined;
  /** Created at or after (inclusive). */
  createdFrom?: Date | undefined;
  /** Created before (exclusive). */
  createdTo?: Date | undefined;
}

/** AiJob's list indexes (prisma/schema.prisma), each ending in createdAt. */
export const LIST_INDEXES = {
  user: 'AiJob_userId_createdAt_idx',
  userStatus: 'AiJob_userId_lifecycleStatus_createdAt_idx',
  typeStatus: 'AiJob_jobType_lifecycleStatus_createdAt_idx',
  status: 'AiJob_lifecycleStatus_createdAt_idx',
  createdAt: 'AiJob_createdAt_idx',
} as const;

/** The index a list with these filters reads: the longest equality prefix among the filters given. */
export function listIndexFor(f: JobListFilter): string {
  if (f.userId !== undefined) return f.lifecycleStatus !== undefined ? LIST_INDEXES.userStatus : LIST_INDEXES.user;
  if (f.lifecycleStatus !== undefined) return f.jobType !== undefined ? LIST_INDEXES.typeStatus : LIST_INDEXES.status;
  return LIST_INDEXES.createdAt;
}

const EQUALITY_COLUMNS = ['userId', 'lifecycleStatus', 'jobType', 'queueName', 'errorCode'] as const;

/** Ids of up to `take` jobs matching `f`, after `after`, newest first. */
export async function pageOfJobIds(db: Db, f: JobListFilter, after: PagePosition | undefined, take: number): Promise<string[]> {
  const conditions: string[] = [];
  const values: unknown[] = [];
  for (const column of EQUALITY_COLUMNS) {
    if (f[column] === undefined) continue;
    conditions.push(`${column} = ?`);
    values.push(f[column]);
  }
  if (f.createdFrom) {
    conditions.push('createdAt >= ?');
    values.push(f.createdFrom);
  }
  if (f.createdTo) {
    conditions.push('createdAt < ?');
    values.push(f.createdTo);
  }
  if (after) {
    conditions.push('(createdAt < ? OR (createdAt = ? AND id < ?))');
    values.push(after.createdAt, after.createdAt, after.id);
  }
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM \`AiJob\` FORCE INDEX (\`${listIndexFor(f)}\`) ${where} ORDER BY createdAt DESC, id DESC LIMIT ${Math.trunc(take)}`,
    ...values,
  );
  return rows.map((r) => r.id);
}
