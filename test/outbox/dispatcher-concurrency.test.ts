import { afterAll, describe, expect, it } from 'vitest';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createPrismaClient, type PrismaDb } from '../../lib/db/client.ts';
import { createSqlPool, type SqlPool } from '../../lib/db/sql-pool.ts';
import { runDispatchCycle } from '../../lib/outbox/dispatcher.ts';
import { parseJobMessage } from '../../lib/queue/job-message.ts';
import { countRows } from '../helpers/db.ts';
import {
  createTestQueues, drainQueue, insertQueuedJobsWithEvents, testDispatcherDeps, testSqsClient,
} from '../helpers/outbox-factories.ts';

/** Records the entry ids of every SendMessageBatch call a client makes (SDK middleware, not our code). */
function recordSentEntryIds(sqs: SQSClient): string[] {
  const ids: string[] = [];
  sqs.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { Entries?: { Id?: string }[]; QueueUrl?: string };
      for (const entry of input.Entries ?? []) if (entry.Id) ids.push(entry.Id);
      return next(args);
    },
    { step: 'initialize', name: 'recordSentEntryIds' },
  );
  return ids;
}

describe('dispatcher under concurrency', () => {
  // Each dispatcher has its own Prisma client and raw pool, as separate Lambda containers would.
  const clients: PrismaDb[] = [];
  const pools: SqlPool[] = [];
  afterAll(async () => {
    await Promise.all([...clients.map((c) => c.$disconnect()), ...pools.map((p) => p.end())]);
  });

  it('publishes each of 2,000 rows exactly once with 4 dispatchers, each on its job queue', async () => {
    const { queueUrls } = await createTestQueues();
    const { jobs, events } = await insertQueuedJobsWithEvents(2_000);
    const dispatchers = Array.from({ length: 4 }, (_, i) => {
      const db = createPrismaClient(process.env.DATABASE_URL ?? '');
      const sql = createSqlPool(process.env.DATABASE_URL ?? '');
      clients.push(db);
      pools.push(sql);
      const sqs = testSqsClient();
      const sent = recordSentEntryIds(sqs);
      const deps = testDispatcherDeps({ queueUrls, sqs, db, sql, instanceId: `dispatcher-${i}`, policy: { batchSize: 50 } });
      return { deps, sent };
    });

    await Promise.all(dispatchers.map(async ({ deps }) => {
      while ((await runDispatchCycle(deps)).claimed > 0);
    }));

    expect(await countRows('OutboxEvent', "status = 'published'")).toBe(2_000);
    const sentIds = dispatchers.flatMap((d) => d.sent);
    expect(sentIds).toHaveLength(2_000);
    expect(new Set(sentIds).size).toBe(2_000);
    expect(new Set(sentIds)).toEqual(new Set(events.map((e) => e.id)));
    // The work was actually shared, and each dispatcher's metrics add up.
    for (const { deps } of dispatchers) expect(deps.metrics.total('OutboxPublished')).toBeGreaterThan(0);
    expect(dispatchers.reduce((n, d) => n + d.deps.metrics.total('OutboxPublished'), 0)).toBe(2_000);

    const sqs = testSqsClient();
    const queueOfJob = new Map(jobs.map((j) => [j.id, j.queueName]));
    const received: string[] = [];
    for (const queueName of ['interactive', 'background'] as const) {
      for (const message of await drainQueue(sqs, queueUrls[queueName])) {
        const body = parseJobMessage(message.Body ?? '');
        expect(queueOfJob.get(body.jobId)).toBe(queueName);
        expect(message.Attributes?.MessageGroupId).toBe(body.jobId);
        expect(message.Attributes?.MessageDeduplicationId).toBe(`ai.job.enqueue:${body.jobId}`);
        received.push(body.jobId);
      }
    }
    expect(received).toHaveLength(2_000);
    expect(new Set(received)).toEqual(new Set(queueOfJob.keys()));
  }, 60_000);
});
