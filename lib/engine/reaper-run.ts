/**
 * One scheduled reaper run (every minute, beside the dispatcher): expired leases, stalled released jobs and
 * dead-lettered messages. Counts go to the log and to CloudWatch metrics (EMF).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ConfigurationError, createSqsClient } from '../config/aws.ts';
import { getPrisma, type PrismaDb } from '../db/client.ts';
import { jobRegistry, type JobDefinitionRegistry } from '../jobs/registry.ts';
import { reapDeadLetters, type DeadLetterCounts } from './dead-letters.ts';
import { DEFAULT_REAPER_OPTIONS, reapExpiredLeases, reapStalledJobs, type ReapCounts, type ReaperOptions } from './reaper.ts';

export interface ReaperDeps {
  db: PrismaDb;
  registry: JobDefinitionRegistry;
  sqs: SQSClient;
  deadLetterQueueUrls: string[];
  logger: Logger;
  metrics: Metrics;
  options: ReaperOptions;
}

export interface ReaperRunSummary {
  expired: ReapCounts;
  stalled: ReapCounts;
  deadLetters: DeadLetterCounts;
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
    logger: new Logger({ serviceName: 'ai-job-reaper' }),
    metrics: new Metrics({ namespace: 'AiJobs', serviceName: 'ai-job-reaper' }),
    options: DEFAULT_REAPER_OPTIONS,
  };
}

export async function runReaper(deps: ReaperDeps): Promise<ReaperRunSummary> {
  const expired = await reapExpiredLeases(deps.db, deps.options);
  const stalled = await reapStalledJobs(deps.db, deps.registry, deps.options);
  const deadLetters = await reapDeadLetters(deps.db, { sqs: deps.sqs, deadLetterQueueUrls: deps.deadLetterQueueUrls });
  const summary = { expired, stalled, deadLetters };
  deps.metrics.addMetric('LeasesReleased', MetricUnit.Count, expired.released + stalled.released);
  deps.metrics.addMetric('JobsReenqueued', MetricUnit.Count, expired.reenqueued + stalled.reenqueued);
  deps.metrics.addMetric('LeaseExpiredFailures', MetricUnit.Count, expired.failed + stalled.failed);
  deps.metrics.addMetric('DeadLetteredFailures', MetricUnit.Count, deadLetters.failed);
  deps.metrics.addMetric('DeadLetterMessagesSeen', MetricUnit.Count, deadLetters.read);
  deps.metrics.publishStoredMetrics();
  const anything = expired.failed + expired.released + stalled.reenqueued + stalled.failed + deadLetters.read > 0;
  if (anything) deps.logger.warn('reaper recovered jobs', { ...summary });
  return summary;
}
