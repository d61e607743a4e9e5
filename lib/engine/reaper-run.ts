/**
 * One scheduled reaper run (every minute, beside the dispatcher): expired leases, overdue retries, queued jobs
 * nobody picked up, dead-lettered messages, and the capacity sweep (expired reservations given back). Counts go
 * to the log and to CloudWatch metrics (EMF), with the readings the budget alarms watch
 * (lib/capacity/budget-metrics.ts: the platform's spend against its daily cap, models in cooldown).
 * Bounds come from the environment ({@link REAPER_ENV}), defaults in DEFAULT_REAPER_OPTIONS.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ConfigurationError, createSqsClient } from '../config/aws.ts';
import { getPrisma, type PrismaDb } from '../db/client.ts';
import { jobRegistry, type JobDefinitionRegistry } from '../jobs/registry.ts';
import { reapDeadLetters, type DeadLetterCounts } from './dead-letters.ts';
import { DEFAULT_REAPER_OPTIONS, reapExpiredLeases, reapOverdueRetries, type ReapCounts, type ReaperOptions } from './reaper.ts';
import { reapUnpickedQueuedJobs } from './reaper-queued.ts';
import { sweepCapacity, type CapacitySweepCounts } from '../capacity/sweep.ts';
import { addBudgetMetrics, BUDGET_METRICS, readBudgetReadings, REAPER_METRICS } from '../capacity/budget-metrics.ts';
import { spendCapDefaultsFromEnv, type SpendCapDefaults } from '../spend/caps.ts';

export interface ReaperDeps {
  db: PrismaDb;
  registry: JobDefinitionRegistry;
  sqs: SQSClient;
  deadLetterQueueUrls: string[];
  logger: Logger;
  metrics: Metrics;
  options: ReaperOptions;
  /** The stage's default spending caps (the platform's, for its alarm); default: from the environment. */
  caps?: SpendCapDefaults;
}

export interface ReaperRunSummary {
  expired: ReapCounts;
  stalled: ReapCounts;
  queued: ReapCounts;
  deadLetters: DeadLetterCounts;
  /** Expired capacity holds given back, and old windows, waits and counters deleted (lib/capacity/sweep.ts). */
  capacity: CapacitySweepCounts;
}

/** Environment variables overriding the reaper's bounds (milliseconds). */
export const REAPER_ENV = {
  graceMs: 'REAPER_LEASE_GRACE_MS',
  overdueRetryMs: 'REAPER_OVERDUE_RETRY_MS',
  interactive: 'REAPER_QUEUED_BOUND_INTERACTIVE_MS',
  background: 'REAPER_QUEUED_BOUND_BACKGROUND_MS',
} as const;

/** DEFAULT_REAPER_OPTIONS with the overrides set in `env`. @throws ConfigurationError for a bad number */
export function reaperOptionsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ReaperOptions {
  const ms = (name: string, fallback: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) throw new ConfigurationError(name, 'must be a whole number of milliseconds');
    return value;
  };
  const d = DEFAULT_REAPER_OPTIONS;
  return {
    ...d,
    graceMs: ms(REAPER_ENV.graceMs, d.graceMs),
    overdueRetryMs: ms(REAPER_ENV.overdueRetryMs, d.overdueRetryMs),
    queuedBoundMs: {
      interactive: ms(REAPER_ENV.interactive, d.queuedBoundMs.interactive),
      background: ms(REAPER_ENV.background, d.queuedBoundMs.background),
    },
  };
}

/** Environment variables naming the dead-letter queues the reaper reads. */
export const DEAD_LETTER_QUEUE_URL_ENV = ['INTERACTIVE_DLQ_URL', 'BACKGROUND_DLQ_URL'] as const;

export function reaperDepsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ReaperDeps {
  const deadLetterQueueUrls = DEAD_LETTER_QUEUE_URL_ENV.map((name) => {
    const url = env[name]?.trim();
    if (!url) throw new ConfigurationError(name, 'is not set');
    return url;
  });
  return {
    db: getPrisma(), registry: jobRegistry, sqs: createSqsClient(env), deadLetterQueueUrls,
    logger: new Logger({ serviceName: REAPER_METRICS.service }),
    metrics: new Metrics({ namespace: REAPER_METRICS.namespace, serviceName: REAPER_METRICS.service }),
    options: reaperOptionsFromEnv(env),
    caps: spendCapDefaultsFromEnv(env),
  };
}

export async function runReaper(deps: ReaperDeps): Promise<ReaperRunSummary> {
  const expired = await reapExpiredLeases(deps.db, deps.options);
  const stalled = await reapOverdueRetries(deps.db, deps.options);
  const queued = await reapUnpickedQueuedJobs(deps.db, deps.options);
  const deadLetters = await reapDeadLetters(deps.db, { sqs: deps.sqs, deadLetterQueueUrls: deps.deadLetterQueueUrls });
  const capacity = await sweepCapacity();
  const budget = await readBudgetReadings(deps.caps ?? spendCapDefaultsFromEnv());
  const summary = { expired, stalled, queued, deadLetters, capacity };
  deps.metrics.addMetric('LeasesReleased', MetricUnit.Count, expired.released + stalled.released);
  deps.metrics.addMetric('JobsReenqueued', MetricUnit.Count, expired.reenqueued + stalled.reenqueued + queued.reenqueued);
  deps.metrics.addMetric('LeaseExpiredFailures', MetricUnit.Count, expired.failed + stalled.failed);
  deps.metrics.addMetric('QueuedNotPickedUpFailures', MetricUnit.Count, queued.failed);
  deps.metrics.addMetric('DeadLetteredFailures', MetricUnit.Count, deadLetters.failed);
  deps.metrics.addMetric('DeadLetterMessagesSeen', MetricUnit.Count, deadLetters.read);
  deps.metrics.addMetric(BUDGET_METRICS.holdsExpired, MetricUnit.Count, capacity.holdsExpired);
  addBudgetMetrics(deps.metrics, budget);
  deps.metrics.publishStoredMetrics();
  const anything = expired.failed + expired.released + stalled.reenqueued + stalled.failed + queued.reenqueued + queued.failed + deadLetters.read
    + capacity.holdsExpired > 0;
  if (anything) deps.logger.warn('reaper recovered jobs', { ...summary });
  return summary;
}
