import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as adminHandler } from '../../functions/api-admin.ts';
import { createAdminApiHandler } from '../../lib/api/admin-api.ts';
import { reaperReportSchema } from '../../lib/api/response-schemas.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { DEFAULT_REAPER_OPTIONS, reapExpiredLeases } from '../../lib/engine/reaper.ts';
import { insertJob, minutesAgo, secondsFromNow } from '../helpers/factories.ts';
import { adminClaims, apiEvent, invoke, userClaims } from '../helpers/api-events.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

const REPORT = 'GET /admin-api/ai/reaper/report';

/** One job of each kind the reaper acts on, and one healthy job beside each. */
async function seed() {
  return {
    expired: await insertJob({ lifecycleStatus: 'running', lockUntil: minutesAgo(5) }),
    leased: await insertJob({ lifecycleStatus: 'running', lockUntil: secondsFromNow(60) }),
    // Within the 30 s grace: the heartbeat may just be late.
    justExpired: await insertJob({ lifecycleStatus: 'running', lockUntil: new Date(Date.now() - 5_000) }),
    overdue: await insertJob({ lifecycleStatus: 'running', lockedBy: null, lockUntil: minutesAgo(5) }),
    dueSoon: await insertJob({ lifecycleStatus: 'running', lockedBy: null, lockUntil: secondsFromNow(30) }),
    unpicked: await insertJob({ queueName: 'interactive', createdAt: minutesAgo(10) }),
    // The background bound is 30 minutes.
    backgroundWaiting: await insertJob({ queueName: 'background', createdAt: minutesAgo(10) }),
    fresh: await insertJob(),
    finished: await insertJob({ lifecycleStatus: 'failed', createdAt: minutesAgo(60) }),
  };
}

describe('GET /admin-api/ai/reaper/report', () => {
  it('lists exactly the open jobs the reaper\'s predicates select, by kind, under its configured bounds', async () => {
    const jobs = await seed();
    const res = await invoke(adminHandler, apiEvent(REPORT, { claims: adminClaims() }));
    expect(res.status).toBe(200);
    const report = reaperReportSchema.parse(res.body);
    expect(report.bounds).toEqual({ graceMs: 30_000, overdueRetryMs: 60_000, queuedBoundMs: { interactive: 300_000, background: 1_800_000 } });
    expect(report.items.map((i) => [i.kind, i.job.jobId])).toEqual([
      ['expired_lease', jobs.expired.id],
      ['overdue_retry', jobs.overdue.id],
      ['queued_not_picked_up', jobs.unpicked.id],
    ]);
    expect(report.items[0]?.since).toBe(jobs.expired.lockUntil?.toISOString());
    expect(report.items[2]?.since).toBe(jobs.unpicked.createdAt.toISOString());
  });

  it('changes nothing, and the reaper then acts on the expired lease it listed', async () => {
    const jobs = await seed();
    const before = await getPrisma().aiJob.findMany({ orderBy: { id: 'asc' } });
    const report = reaperReportSchema.parse((await invoke(adminHandler, apiEvent(REPORT, { claims: adminClaims() }))).body);
    expect(await getPrisma().aiJob.findMany({ orderBy: { id: 'asc' } })).toEqual(before);
    const counts = await reapExpiredLeases(getPrisma(), DEFAULT_REAPER_OPTIONS);
    expect(counts.released + counts.failed).toBe(report.items.filter((i) => i.kind === 'expired_lease').length);
    const reaped = await getPrisma().aiJob.findUniqueOrThrow({ where: { id: jobs.expired.id } });
    expect(reaped.lockedBy).toBeNull();
  });

  it('follows the bounds it is given (the reaper\'s environment): a shorter queued bound lists the background job too', async () => {
    const jobs = await seed();
    const handler = createAdminApiHandler({ reaperOptions: { ...DEFAULT_REAPER_OPTIONS, queuedBoundMs: { interactive: 300_000, background: 60_000 } } });
    const report = reaperReportSchema.parse((await invoke(handler, apiEvent(REPORT, { claims: adminClaims() }))).body);
    expect(report.items.filter((i) => i.kind === 'queued_not_picked_up').map((i) => i.job.jobId).sort())
      .toEqual([jobs.unpicked.id, jobs.backgroundWaiting.id].sort());
  });

  it('403 for a non-admin; 400 for any query parameter', async () => {
    expect((await invoke(adminHandler, apiEvent(REPORT, { claims: userClaims('user-1') }))).status).toBe(403);
    expect((await invoke(adminHandler, apiEvent(REPORT, { claims: adminClaims(), query: { limit: '5' } }))).status).toBe(400);
  });
});
