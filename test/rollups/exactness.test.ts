/**
 * The stats and usage rollups stay exact through a mixed run on the local runtime (HTTP only): creation of
 * three job types by several users, retries and failures (the mock provider fails half its calls), cancels
 * (queued and running), admin retries — with the maintenance loop running throughout. Compared with full
 * counts of AiJob and AiUsageLog, both before the rollups cover the run (all live) and after (all rolled up).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { aggregateFinishedJobsStep } from '../../lib/rollups/finished-jobs-rollup.ts';
import { aggregateUsageStep } from '../../lib/rollups/usage-rollup.ts';
import { statsResponseSchema, usageReportSchema } from '../../lib/api/response-schemas.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';

let e: E2e;
let admin: string;
beforeAll(async () => {
  e = await startE2e({ mockAi: { failureRate: 0.5 }, maintenanceIntervalMs: 100 });
  admin = await e.token('root', { admin: true });
});
afterAll(async () => e?.stop());

const KINDS = [
  { path: '/api/ai/feynman-evaluations', body: (i: number) => ({ concept: `Concept ${i}`, explanation: `Explanation ${i}.` }) },
  { path: '/api/ai/quiz-generations', body: (i: number) => ({ sourceText: `Fact ${i}: water is wet.`, count: 2, difficulty: 'easy' }) },
  { path: '/api/ai/flashcard-generations', body: (i: number) => ({ sourceText: `Term ${i} means a thing.`, maxCards: 2 }) },
];

async function fullCounts(): Promise<Record<string, Record<string, number>>> {
  const rows = await getPrisma().aiJob.groupBy({ by: ['jobType', 'lifecycleStatus'], _count: { _all: true } });
  const out: Record<string, Record<string, number>> = {};
  for (const r of rows) (out[r.jobType] ??= {})[r.lifecycleStatus] = r._count._all;
  return out;
}

/** Stats per type, zeros dropped, to compare with fullCounts. */
function nonZero(byType: Record<string, Record<string, number>>): Record<string, Record<string, number>> {
  return Object.fromEntries(Object.entries(byType).map(([t, c]) => [t, Object.fromEntries(Object.entries(c).filter(([, n]) => n > 0))]));
}

async function expectStatsExact(): Promise<void> {
  const res = await e.api('GET', '/admin-api/ai/stats', { token: admin });
  expect(res.status).toBe(200);
  const stats = statsResponseSchema.parse(res.body);
  const full = await fullCounts();
  expect(nonZero(stats.jobs.byType)).toEqual(full);
  const finished = Object.values(full).reduce((n, c) => n + (c.succeeded ?? 0) + (c.failed ?? 0) + (c.cancelled ?? 0), 0);
  const sum = (w: { byStatus: Record<string, number> }) => Object.values(w.byStatus).reduce((a, b) => a + b, 0);
  // Every job of this run finished within the hour, so each window holds them all.
  expect(sum(stats.jobs.finished.lastHour)).toBe(finished);
  expect(sum(stats.jobs.finished.last24h)).toBe(finished);
  expect(stats.jobs.finished.perDay.reduce((n, d) => n + sum(d), 0)).toBe(finished);
}

async function expectUsageExact(): Promise<void> {
  const ledger = await getPrisma().aiUsageLog.groupBy({ by: ['userId'], _sum: { totalTokens: true, costUsd: true }, _count: { _all: true } });
  const res = await e.api('GET', '/admin-api/ai/usage', { token: admin });
  const report = usageReportSchema.parse(res.body);
  expect(report.total.calls).toBe(ledger.reduce((n, u) => n + u._count._all, 0));
  expect(report.total.totalTokens).toBe(ledger.reduce((n, u) => n + (u._sum.totalTokens ?? 0), 0));
  expect(report.total.costUsd).toBe(ledger.reduce((n, u) => n.add(u._sum.costUsd ?? 0), ledger[0]!._sum.costUsd!.mul(0)).toFixed(8));
  const byUser = usageReportSchema.parse((await e.api('GET', '/admin-api/ai/usage/users', { token: admin })).body);
  for (const u of ledger) {
    const rows = byUser.rows.filter((r) => r.userId === u.userId);
    expect(rows.reduce((n, r) => n + r.calls, 0), u.userId).toBe(u._count._all);
  }
  expect(byUser.userCount).toBe(ledger.length);
  expect(byUser.total).toEqual(report.total);
  // `limit`: the rows of the users with the highest cost only (ties by id), the count and total of them all.
  const byCost = [...ledger].sort((a, b) => b._sum.costUsd!.comparedTo(a._sum.costUsd!) || (a.userId < b.userId ? -1 : 1));
  const top = usageReportSchema.parse((await e.api('GET', '/admin-api/ai/usage/users?limit=3', { token: admin })).body);
  expect(new Set(top.rows.map((r) => r.userId))).toEqual(new Set(byCost.slice(0, 3).map((u) => u.userId)));
  const sorted = (rows: typeof top.rows) => rows.map((r) => JSON.stringify(r)).sort();
  expect(sorted(top.rows)).toEqual(sorted(byUser.rows.filter((r) => top.rows.some((t) => t.userId === r.userId))));
  expect(top.userCount).toBe(ledger.length);
  expect(top.total).toEqual(report.total);
  const one = ledger[0]!;
  const filtered = usageReportSchema.parse((await e.api('GET', `/admin-api/ai/usage?userId=${one.userId}`, { token: admin })).body);
  expect(filtered.total.calls).toBe(one._count._all);
}

describe('rollups after a mixed run', () => {
  it('stats and usage reports equal full counts, read live and read from the rollups', async () => {
    // 8 users over 3 kinds: at most 2 jobs per user and type, far under the active-job limit (5) however slowly they run.
    const users = await Promise.all(Array.from({ length: 8 }, (_, u) => e.token(`mix-user-${u}`)));
    const jobs: { id: string; token: string }[] = [];
    for (let i = 0; i < 36; i += 1) {
      const kind = KINDS[i % KINDS.length]!;
      const token = users[i % users.length]!;
      const res = await e.api('POST', kind.path, { token, body: kind.body(i) });
      expect(res.status).toBe(202);
      jobs.push({ id: res.body.jobId, token });
      if (i % 5 === 0) await e.api('POST', `/api/ai/jobs/${res.body.jobId}/cancel`, { token });
    }
    const finished = await Promise.all(jobs.map((j) => e.waitForTerminal(j.id, j.token, 90_000)));
    const retryable = finished.filter((j) => j.lifecycleStatus !== 'succeeded');
    expect(retryable.length).toBeGreaterThan(0);
    const retried = await Promise.all(retryable.map(async (j) => {
      const res = await e.api('POST', `/admin-api/ai/jobs/${j.jobId}/retry`, { token: admin });
      expect(res.status).toBe(201);
      return res.body.jobId as string;
    }));
    await Promise.all(retried.map((id, k) => e.waitForTerminal(id, jobs.find((j) => j.id === retryable[k].jobId)!.token, 90_000)));
    const statuses = new Set((await getPrisma().aiJob.findMany({ select: { lifecycleStatus: true } })).map((j) => j.lifecycleStatus));
    expect(statuses).toEqual(new Set(['succeeded', 'failed', 'cancelled']));

    await expectStatsExact();
    await expectUsageExact();

    // Close the current hour and day as the maintenance run will once they are over, then read again.
    const later = new Date(Date.now() + 2 * 86_400_000);
    while (await aggregateFinishedJobsStep(getPrisma(), later));
    while (await aggregateUsageStep(getPrisma(), later));
    const hourly = await getPrisma().aiJobFinishedHourly.aggregate({ _sum: { jobs: true } });
    expect(hourly._sum.jobs).toBe(await getPrisma().aiJob.count({ where: { lifecycleStatus: { in: ['succeeded', 'failed', 'cancelled'] } } }));
    await expectStatsExact();
    await expectUsageExact();
  }, 240_000);
});
