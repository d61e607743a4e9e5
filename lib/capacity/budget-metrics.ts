/**
 * What the budget alarms watch (infra/budget-alarms.ts), read from the shared rows by the reaper every minute and
 * published as CloudWatch metrics (EMF, namespace `AiJobs`, dimension `service` = the reaper's):
 * - `PlatformSpendCapUsedPercent`: the platform's spend today (settled + reserved) as a percentage of its daily
 *   cap, the cap that applies now (an admin's or the stage's); nothing when the platform has no cap.
 * - `ModelInCooldown` per model (dimension `model` = `provider/model`): 1 while the model is cooling down after a
 *   429, else 0, for every model that has a limits row. The rows hold when a cooldown ends, not when it began, so
 *   "in cooldown for more than 10 minutes" is this value at 1 in each of 10 consecutive minutes.
 * - `CapacityHoldsExpired` (lib/engine/reaper-run.ts, from the sweep): reservations that never settled and had to
 *   be given back — a consumer died holding them.
 */
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { getSqlPool, type SqlPool } from '../db/sql-pool.ts';
import { readSpendUse } from '../spend/caps-repository.ts';
import { DEFAULT_SUBJECT, type SpendCapDefaults } from '../spend/caps.ts';
import { DATABASE_CLOCK, withClock, type DbClock } from './db-clock.ts';
import { BUDGET_METRICS, MODEL_DIMENSION } from './budget-metric-names.ts';

export { BUDGET_METRICS, MODEL_DIMENSION, REAPER_METRICS } from './budget-metric-names.ts';

export interface BudgetReadings {
  /** Spend today against the platform's daily cap, in percent (one decimal); null when there is no cap. */
  platformSpendPercent: number | null;
  /** Every model with a limits row, and whether it is cooling down now. */
  models: { model: string; cooling: boolean }[];
}

/** Two reads: the platform's counter with its cap, and the models' cooldowns (a small table). */
export async function readBudgetReadings(caps: SpendCapDefaults, o: { pool?: SqlPool; clock?: DbClock } = {}): Promise<BudgetReadings> {
  const pool = o.pool ?? getSqlPool();
  const clock = o.clock ?? DATABASE_CLOCK;
  const [platform] = await readSpendUse([{ scope: 'platform_day', subject: DEFAULT_SUBJECT }], { defaults: caps, pool, clock });
  const read = withClock('SELECT provider, model, (cooldownUntil IS NOT NULL AND cooldownUntil > {now}) AS cooling FROM `ProviderLimit` ORDER BY provider, model', clock);
  const rows = (await pool.query(read.sql, read.values)) as { provider: string; model: string; cooling: unknown }[];
  const cap = platform?.capUsd ? Number(platform.capUsd) : 0;
  const used = platform ? Number(platform.settledUsd) + Number(platform.reservedUsd) : 0;
  return {
    platformSpendPercent: cap > 0 ? Math.round((1000 * used) / cap) / 10 : null,
    models: rows.map((r) => ({ model: `${r.provider}/${r.model}`, cooling: Number(r.cooling) === 1 })),
  };
}

/**
 * Adds the readings to `metrics` (published with the reaper's other counts), and one single-metric record per
 * model (each its own `model` dimension, flushed at once).
 */
export function addBudgetMetrics(metrics: Metrics, r: BudgetReadings): void {
  if (r.platformSpendPercent !== null) metrics.addMetric(BUDGET_METRICS.platformSpendPercent, MetricUnit.Percent, r.platformSpendPercent);
  for (const { model, cooling } of r.models) {
    const single = metrics.singleMetric();
    single.addDimension(MODEL_DIMENSION, model);
    single.addMetric(BUDGET_METRICS.modelInCooldown, MetricUnit.Count, cooling ? 1 : 0);
  }
}
