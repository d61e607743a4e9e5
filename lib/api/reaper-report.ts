/**
 * The reaper's view, read-only (`GET /admin-api/ai/reaper/report`): the open jobs its next run would act on,
 * found with the reaper's own predicates and bounds (lib/engine/reaper*.ts, bounds from the same environment
 * variables), each query an indexed range capped at {@link REAPER_REPORT_LIMIT} rows. Nothing is changed: the
 * reaper itself decides (after checking the outbox) whether it re-enqueues, releases or fails each job.
 */
import type { AiJob, Db } from '../db/client.ts';
import { findExpiredLocks } from '../jobs/lifecycle-queries.ts';
import { overdueRetryWhere } from '../engine/reaper.ts';
import { unpickedQueuedWhere } from '../engine/reaper-queued.ts';
import type { ReaperOptions } from '../engine/reaper.ts';
import { JOB_QUEUE_NAMES } from '../queue/queue-definitions.ts';
import type { ReaperReport } from './response-schemas.ts';
import { toAdminJobSummary } from './views.ts';

/** Most jobs listed per kind (and per queue for queued jobs). */
export const REAPER_REPORT_LIMIT = 100;

type Kind = ReaperReport['items'][number]['kind'];

/** The report at `now` under `opts` (the reaper's bounds). */
export async function reaperReport(db: Db, opts: ReaperOptions, now: Date): Promise<ReaperReport> {
  const take = REAPER_REPORT_LIMIT;
  const overdueCutoff = new Date(now.getTime() - opts.overdueRetryMs);
  const [expired, overdue, ...queued] = await Promise.all([
    findExpiredLocks(db, { graceMs: opts.graceMs, limit: take, now }),
    db.aiJob.findMany({ where: overdueRetryWhere(overdueCutoff), orderBy: { lockUntil: 'asc' }, take }),
    ...JOB_QUEUE_NAMES.map((queueName) => db.aiJob.findMany({
      where: unpickedQueuedWhere(queueName, new Date(now.getTime() - opts.queuedBoundMs[queueName])), orderBy: { createdAt: 'asc' }, take,
    })),
  ]);
  const item = (kind: Kind, job: AiJob, since: Date | null) => ({ kind, since: (since ?? job.updatedAt).toISOString(), job: toAdminJobSummary(job, []) });
  return {
    generatedAt: now.toISOString(),
    bounds: { graceMs: opts.graceMs, overdueRetryMs: opts.overdueRetryMs, queuedBoundMs: opts.queuedBoundMs },
    limitPerKind: take,
    items: [
      ...expired.map((j) => item('expired_lease', j, j.lockUntil)),
      ...overdue.map((j) => item('overdue_retry', j, j.lockUntil)),
      ...queued.flat().map((j) => item('queued_not_picked_up', j, j.createdAt)),
    ],
  };
}
