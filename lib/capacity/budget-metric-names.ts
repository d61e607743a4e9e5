/**
 * Names of the metrics the budget alarms watch (infra/budget-alarms.ts) and the reaper publishes
 * (./budget-metrics.ts, lib/engine/reaper-run.ts): one module without imports, so the stack reads the same names.
 */

/** Where the reaper's metrics go: CloudWatch namespace, and the `service` dimension Powertools adds. */
export const REAPER_METRICS = { namespace: 'AiJobs', service: 'ai-job-reaper' } as const;

export const BUDGET_METRICS = {
  /** The platform's spend today (settled + reserved) in percent of its daily cap. */
  platformSpendPercent: 'PlatformSpendCapUsedPercent',
  /** Per model (dimension {@link MODEL_DIMENSION}): 1 while it cools down after a 429, else 0. */
  modelInCooldown: 'ModelInCooldown',
  /** Reservations that never settled and were given back by the sweep. */
  holdsExpired: 'CapacityHoldsExpired',
} as const;

/** The dimension naming the model (`provider/model`) of `ModelInCooldown`. */
export const MODEL_DIMENSION = 'model';
