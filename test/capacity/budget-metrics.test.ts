/**
 * The readings the budget alarms watch (infra/budget-alarms.ts), read from the shared rows and published as EMF:
 * the platform's spend today against its daily cap (the cap that applies now), each model's cooldown, and the
 * reservations the sweep had to give back. Checked on the EMF records themselves, with the names and dimensions
 * the alarms use, on the real database with its clock pinned.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { addBudgetMetrics, BUDGET_METRICS, MODEL_DIMENSION, readBudgetReadings, REAPER_METRICS } from '../../lib/capacity/budget-metrics.ts';
import { reserve } from '../../lib/capacity/reserve.ts';
import { cooldownStatement } from '../../lib/capacity/settle-statements.ts';
import { sweepCapacity } from '../../lib/capacity/sweep.ts';
import { getSqlPool } from '../../lib/db/sql-pool.ts';
import { setSpendCap } from '../../lib/spend/caps-repository.ts';
import { fixedClock, holdRequest, NO_CAPS } from '../helpers/capacity.ts';
import { rawDb } from '../helpers/db.ts';

const clock = fixedClock('2026-12-06T10:15:30.000Z');
const chat = { provider: 'deepseek', model: 'deepseek-chat' };
const mock = { provider: 'mock', model: 'mock-chat' };

/** EMF records written to stdout while `run` runs, parsed. */
function emfOf(run: () => void): Record<string, any>[] {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: unknown) => lines.push(String(chunk)) > 0) as typeof process.stdout.write;
  try {
    run();
  } finally {
    process.stdout.write = write;
  }
  return lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l));
}

let disabled: string | undefined;
beforeEach(() => {
  disabled = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});
afterEach(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = disabled;
});

describe('budget readings', () => {
  it("give the platform's spend today as a percentage of the cap that applies, and each model's cooldown", async () => {
    await (await rawDb()).query("INSERT INTO SpendCounter (scope, subject, periodStart, reservedUsd, settledUsd) VALUES ('platform_day', '*', '2026-12-06', 5, 80.5)");
    await (await rawDb()).query("INSERT INTO SpendCounter (scope, subject, periodStart, reservedUsd, settledUsd) VALUES ('platform_day', '*', '2026-12-05', 0, 99)");
    for (const route of [chat, mock]) await reserve(holdRequest({ clock, route }));
    const cool = cooldownStatement(chat, 20_000, clock);
    await getSqlPool().query(cool.sql, cool.values);
    const caps = { ...NO_CAPS, platform_day: '100.00000000' };
    expect(await readBudgetReadings(caps, { clock })).toEqual({
      platformSpendPercent: 85.5,
      models: [{ model: 'deepseek/deepseek-chat', cooling: true }, { model: 'mock/mock-chat', cooling: false }],
    });
    await setSpendCap('platform_day', '*', '90', 'admin:root', { jobTypes: [] }); // an admin's cap wins over the stage's
    expect((await readBudgetReadings(caps, { clock })).platformSpendPercent).toBe(95);
    // 20 s later the cooldown is over; a platform without a cap has no percentage.
    const later = fixedClock('2026-12-06T10:15:51.000Z');
    await getSqlPool().query("DELETE FROM `SpendCap`");
    expect(await readBudgetReadings(NO_CAPS, { clock: later })).toEqual({
      platformSpendPercent: null, models: [{ model: 'deepseek/deepseek-chat', cooling: false }, { model: 'mock/mock-chat', cooling: false }],
    });
  });

  it('publish as EMF in the AiJobs namespace under the reaper\'s service: the percentage with its counts, one record per model', async () => {
    const metrics = new Metrics({ namespace: REAPER_METRICS.namespace, serviceName: REAPER_METRICS.service });
    const records = emfOf(() => {
      addBudgetMetrics(metrics, { platformSpendPercent: 85.5, models: [{ model: 'deepseek/deepseek-chat', cooling: true }, { model: 'mock/mock-chat', cooling: false }] });
      metrics.addMetric(BUDGET_METRICS.holdsExpired, MetricUnit.Count, 2);
      metrics.publishStoredMetrics();
    });
    const cooldowns = records.filter((r) => BUDGET_METRICS.modelInCooldown in r);
    expect(cooldowns.map((r) => [r[MODEL_DIMENSION], r[BUDGET_METRICS.modelInCooldown], r.service])).toEqual([
      ['deepseek/deepseek-chat', 1, REAPER_METRICS.service], ['mock/mock-chat', 0, REAPER_METRICS.service],
    ]);
    expect(cooldowns[0]!._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'AiJobs', Dimensions: [expect.arrayContaining(['service', MODEL_DIMENSION])] });
    const stored = records.find((r) => BUDGET_METRICS.platformSpendPercent in r)!;
    expect(stored).toMatchObject({ service: REAPER_METRICS.service, [BUDGET_METRICS.platformSpendPercent]: 85.5, [BUDGET_METRICS.holdsExpired]: 2 });
    expect(stored._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'AiJobs', Dimensions: [['service']] });
  });

  it('count the reservations that never settled: the sweep gives back a held one after it expired', async () => {
    const held = holdRequest({ clock, holdMs: 1_000 });
    expect((await reserve(held)).kind).toBe('held');
    expect((await sweepCapacity({ clock: fixedClock('2026-12-06T10:15:32.000Z') })).holdsExpired).toBe(1);
  });
});
