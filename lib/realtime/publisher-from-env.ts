/**
 * A StreamPublisher from the environment (the process registers it: ./handler-publishing.ts): {@link REALTIME_ENDPOINT_ENV} set (the stack sets it on
 * every function that writes stream entries; the local runtime sets it to its hub) → an
 * {@link HttpStreamPublisher} signing with the function's own credentials; unset → NO_STREAM_PUBLISHER
 * (LocalStack, or a stage without realtime push: readers long-poll).
 *
 * Problems become EMF metrics (namespace `AiJobs`, service {@link REALTIME_PUBLISHER_SERVICE}: {@link
 * PUBLISH_FAILED_METRIC} and {@link PUBLISH_DROPPED_METRIC}, published on every `flush`, which a handler calls
 * before it returns) and WARN log lines that name the job and the reason, never the payload; at most one line
 * per {@link LOG_INTERVAL_MS}, with the count of what it summarises, so an outage cannot flood the logs.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { ConfigurationError } from '../config/aws.ts';
import { NO_STREAM_PUBLISHER, type StreamPublisher } from '../stream/protocol.ts';
import { HttpStreamPublisher, type PublishProblem } from './publisher.ts';
import { createEventsSigner } from './sigv4.ts';

/** The Event API's HTTP publish endpoint, e.g. `https://x.appsync-api.eu-west-1.amazonaws.com/event`. */
export const REALTIME_ENDPOINT_ENV = 'REALTIME_HTTP_ENDPOINT';
/** Optional: per-request timeout in milliseconds (default 2000). */
export const REALTIME_TIMEOUT_ENV = 'REALTIME_PUBLISH_TIMEOUT_MS';
export const REALTIME_PUBLISHER_SERVICE = 'realtime-publisher';
export const PUBLISH_FAILED_METRIC = 'RealtimePublishFailed';
export const PUBLISH_DROPPED_METRIC = 'RealtimePublishDropped';
const LOG_INTERVAL_MS = 10_000;

export interface PublisherSinks {
  logger?: Pick<Logger, 'warn'>;
  metrics?: Pick<Metrics, 'addMetric' | 'publishStoredMetrics'>;
}

/**
 * The publisher the environment configures.
 * @throws ConfigurationError when the endpoint is not an http(s) URL or the region is missing
 */
export function streamPublisherFromEnv(env: Readonly<Record<string, string | undefined>> = process.env, sinks: PublisherSinks = {}): StreamPublisher {
  const endpoint = env[REALTIME_ENDPOINT_ENV]?.trim();
  if (!endpoint) return NO_STREAM_PUBLISHER;
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) throw new ConfigurationError(REALTIME_ENDPOINT_ENV, 'must be an http(s) URL');
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim();
  if (!region) throw new ConfigurationError('AWS_REGION', 'must be set to sign realtime publishes');
  const timeout = Number(env[REALTIME_TIMEOUT_ENV] ?? '');
  const metrics = sinks.metrics ?? new Metrics({ namespace: 'AiJobs', serviceName: REALTIME_PUBLISHER_SERVICE });
  const reporter = problemReporter(sinks.logger ?? new Logger({ serviceName: REALTIME_PUBLISHER_SERVICE }), metrics);
  return new HttpStreamPublisher({
    httpEndpoint: endpoint,
    sign: createEventsSigner(region),
    ...(Number.isFinite(timeout) && timeout > 0 ? { timeoutMs: timeout } : {}),
    report: reporter.report,
    onFlushed: reporter.publish,
  });
}

/** Counts problems for the metrics and logs them, throttled. */
export function problemReporter(logger: Pick<Logger, 'warn'>, metrics: Pick<Metrics, 'addMetric' | 'publishStoredMetrics'>) {
  const pending = { failed: 0, dropped: 0 };
  let lastLog = 0;
  let unlogged = 0;
  return {
    report(problem: PublishProblem): void {
      if (problem.kind === 'failed') pending.failed += problem.events;
      else pending.dropped += problem.count;
      unlogged += 1;
      const now = Date.now();
      if (now - lastLog < LOG_INTERVAL_MS) return;
      lastLog = now;
      logger.warn('realtime publish problem (readers backfill what pushes miss)', { ...problem, problemsSinceLastLine: unlogged });
      unlogged = 0;
    },
    publish(): void {
      if (pending.failed === 0 && pending.dropped === 0) return;
      if (pending.failed > 0) metrics.addMetric(PUBLISH_FAILED_METRIC, MetricUnit.Count, pending.failed);
      if (pending.dropped > 0) metrics.addMetric(PUBLISH_DROPPED_METRIC, MetricUnit.Count, pending.dropped);
      pending.failed = 0;
      pending.dropped = 0;
      metrics.publishStoredMetrics();
    },
  };
}
