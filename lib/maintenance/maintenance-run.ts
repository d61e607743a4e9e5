/**
 * One scheduled maintenance run (every 15 minutes in AWS, a loop in the local runtime): brings the rollups
 * up to date (lib/rollups/), then applies retention (./retention.ts). Both work in bounded steps and stop
 * starting new ones when the time budget is spent; the next run carries on where this one stopped.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { getPrisma, type PrismaDb } from '../db/client.ts';
import { jobRegistry, type JobDefinitionRegistry } from '../jobs/registry.ts';
import { aggregateFinishedJobsStep } from '../rollups/finished-jobs-rollup.ts';
import { aggregateUsageStep } from '../rollups/usage-rollup.ts';
import { runRetention, type RetentionCounts } from './retention.ts';
import { retentionConfigFromEnv, type RetentionConfig } from './retention-config.ts';

export interface MaintenanceDeps {
  db: PrismaDb;
  registry: JobDefinitionRegistry;
  config: RetentionConfig;
  logger: Pick<Logger, 'info'>;
  metrics?: Metrics;
  now?: () => Date;
}

export interface MaintenanceSummary {
  /** Aggregation steps taken: hours-chunks of finished jobs, days of usage. */
  rollupSteps: { finishedJobs: number; usage: number };
  retention: RetentionCounts;
}

export function maintenanceDepsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): MaintenanceDeps {
  return {
    db: getPrisma(), registry: jobRegistry, config: retentionConfigFromEnv(env),
    logger: new Logger({ serviceName: 'ai-job-maintenance' }),
    metrics: new Metrics({ namespace: 'AiJobs', serviceName: 'ai-job-maintenance' }),
  };
}

/** Repeats `step` until it reports nothing left or the deadline passes; returns the steps taken. */
async function untilDone(step: () => Promise<unknown>, deadline: number): Promise<number> {
  let steps = 0;
  while (Date.now() < deadline && (await step()) !== null) steps += 1;
  return steps;
}

/**
 * One run: rollups, then retention, all within one time budget: `config.budgetMs` (default 60 s), cut to
 * `opts.deadline` (epoch ms) when that comes first — the Lambda passes its own remaining time less a reserve,
 * so a backlog never runs the function into its timeout (no step is started after the deadline; each is short).
 */
export async function runMaintenance(deps: MaintenanceDeps, opts: { deadline?: number } = {}): Promise<MaintenanceSummary> {
  const now = deps.now?.() ?? new Date();
  const deadline = Math.min(Date.now() + deps.config.budgetMs, opts.deadline ?? Number.POSITIVE_INFINITY);
  const finishedJobs = await untilDone(() => aggregateFinishedJobsStep(deps.db, now), deadline);
  const usage = await untilDone(() => aggregateUsageStep(deps.db, now), deadline);
  const retention = await runRetention(deps.db, deps.registry, deps.config, now, deadline);
  const summary = { rollupSteps: { finishedJobs, usage }, retention };
  if (deps.metrics) {
    for (const [name, n] of Object.entries(retention)) deps.metrics.addMetric(`Retention_${name}`, MetricUnit.Count, n);
    deps.metrics.publishStoredMetrics();
  }
  deps.logger.info('maintenance run', { ...summary });
  return summary;
}
