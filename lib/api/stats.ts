/**
 * The admin stats: jobs per state and type, finished jobs per window (lib/rollups/job-stats.ts), the outbox
 * backlog (database), and the approximate depth of each job queue and its dead-letter queue (SQS). Every
 * database read is bounded by open jobs, backlog and recent traffic, never by history (issue 12). SQS trouble never fails the call: an unreachable or
 * unconfigured queue reports null depths with `unavailable: true`, so the database half still arrives
 * during the very outages an operator opens this page for.
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '@aws-lambda-powertools/logger';
import { QUEUE_URL_ENV, awsRegion, endpointFor } from '../config/aws.ts';
import { KeyObjectSha256 } from '../config/sha256.ts';
import type { Db } from '../db/client.ts';
import { OutboxStatus } from '../db/generated/enums.ts';
import { JOB_QUEUE_NAMES, type QueueName } from '../queue/queue-definitions.ts';
import { collectJobStats } from '../rollups/job-stats.ts';
import type { QueueStats, StatsResponse } from './response-schemas.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** Environment variable holding each job queue's dead-letter queue URL. */
export const DLQ_URL_ENV: Readonly<Record<QueueName, string>> = {
  interactive: 'INTERACTIVE_DLQ_URL',
  background: 'BACKGROUND_DLQ_URL',
};

export interface QueueEndpoint {
  queueName: QueueName;
  queueUrl?: string | undefined;
  deadLetterQueueUrl?: string | undefined;
}

/** Queue and DLQ URLs of every job queue from the environment; missing ones stay undefined. */
export function queueEndpointsFromEnv(env: Env = process.env): QueueEndpoint[] {
  return JOB_QUEUE_NAMES.map((queueName) => ({
    queueName,
    queueUrl: env[QUEUE_URL_ENV[queueName]]?.trim() || undefined,
    deadLetterQueueUrl: env[DLQ_URL_ENV[queueName]]?.trim() || undefined,
  }));
}

/** An SQS client that gives up fast (one attempt, short timeouts): stats must not hang on an outage. */
export function createStatsSqsClient(env: Env = process.env): SQSClient {
  return new SQSClient({
    region: awsRegion(env),
    endpoint: endpointFor('SQS', env),
    maxAttempts: 1,
    sha256: KeyObjectSha256,
    // `throwOnRequestTimeout`: without it @smithy/node-http-handler 4 only warns when `requestTimeout` passes.
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true },
  });
}

export interface StatsDeps {
  db: Db;
  sqs: SQSClient;
  queues: readonly QueueEndpoint[];
  logger: Pick<Logger, 'warn'>;
  now: () => Date;
}

/** The full stats response. */
export async function collectStats(deps: StatsDeps): Promise<StatsResponse> {
  const now = deps.now();
  const [jobs, outbox, queues] = await Promise.all([collectJobStats(deps.db, now), outboxCounts(deps.db), queueDepths(deps)]);
  return { generatedAt: now.toISOString(), jobs, outbox, queues };
}

/**
 * Published outbox rows are counted exactly up to this many, and reported as this many (`publishedCapped`) beyond:
 * the count reads at most this many entries of the (status, availableAt) index, whatever the table holds.
 */
export const PUBLISHED_COUNT_CAP = 100_000;

/**
 * Outbox rows per status, all from the (status, availableAt) index: the backlog (pending, processing) and the
 * give-ups (failed, dead) exactly, and the published rows (kept for `RETENTION_OUTBOX_PUBLISHED_DAYS`) exactly up
 * to {@link PUBLISHED_COUNT_CAP}. Not information_schema's TABLE_ROWS: InnoDB's estimate, which MySQL 8 also
 * caches for up to `information_schema_stats_expiry` (24 h by default), would make the figure a day old.
 */
async function outboxCounts(db: Db): Promise<StatsResponse['outbox']> {
  const [groups, published] = await Promise.all([
    db.$queryRawUnsafe<{ status: OutboxStatus; n: bigint | number }[]>(
      "SELECT status, COUNT(*) AS n FROM `OutboxEvent` WHERE status IN ('pending', 'processing', 'failed', 'dead') GROUP BY status",
    ),
    db.$queryRawUnsafe<{ n: bigint | number }[]>(
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM \`OutboxEvent\` WHERE status = 'published' LIMIT ${PUBLISHED_COUNT_CAP + 1}) capped`,
    ),
  ]);
  const byStatus = Object.fromEntries(Object.values(OutboxStatus).map((s) => [s, 0])) as Record<OutboxStatus, number>;
  for (const g of groups) byStatus[g.status] = Number(g.n);
  const publishedRows = Number(published[0]?.n ?? 0);
  byStatus.published = Math.min(publishedRows, PUBLISHED_COUNT_CAP);
  return { byStatus, publishedCapped: publishedRows > PUBLISHED_COUNT_CAP };
}

async function queueDepths(deps: StatsDeps): Promise<QueueStats[]> {
  return Promise.all(
    deps.queues.map(async ({ queueName, queueUrl, deadLetterQueueUrl }) => {
      const [queue, deadLetterQueue] = await Promise.all([depthOf(deps, queueUrl), depthOf(deps, deadLetterQueueUrl)]);
      return {
        queueName,
        queue: queue ?? UNKNOWN_DEPTH,
        deadLetterQueue: deadLetterQueue ?? UNKNOWN_DEPTH,
        unavailable: queue === null || deadLetterQueue === null,
      };
    }),
  );
}

type Depth = QueueStats['queue'];

const UNKNOWN_DEPTH: Depth = { approximateMessages: null, approximateMessagesNotVisible: null };

/** The queue's approximate depth, or null when it has no URL or SQS could not answer. */
async function depthOf(deps: StatsDeps, queueUrl: string | undefined): Promise<Depth | null> {
  if (!queueUrl) return null;
  try {
    const { Attributes = {} } = await deps.sqs.send(new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }));
    return {
      approximateMessages: toCount(Attributes.ApproximateNumberOfMessages),
      approximateMessagesNotVisible: toCount(Attributes.ApproximateNumberOfMessagesNotVisible),
    };
  } catch (err) {
    deps.logger.warn('queue depth unavailable', { queueUrl, error: err as Error });
    return null;
  }
}

function toCount(value: string | undefined): number | null {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n >= 0 ? n : null;
}
