import { setUpApiEnvironment, type ApiTestEnvironment } from './api-env.ts';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as adminHandler } from '../../functions/api-admin.ts';
import { handler as userHandler } from '../../functions/api-user.ts';
import { createAdminApiHandler } from '../../lib/api/admin-api.ts';
import { statsResponseSchema } from '../../lib/api/response-schemas.ts';
import { createStatsSqsClient, queueEndpointsFromEnv } from '../../lib/api/stats.ts';
import { createSqsClient } from '../../lib/config/aws.ts';
import { insertJob } from '../helpers/factories.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { adminClaims, apiEvent, invoke, userClaims } from '../helpers/api-events.ts';
import { deadEndpointEnv } from '../credentials/fixtures.ts';
import { PUBLISHED_COUNT_CAP } from '../../lib/api/stats.ts';
import { rawDb, withStaleStatistics } from '../helpers/db.ts';

let env: ApiTestEnvironment;
beforeAll(async () => {
  env = await setUpApiEnvironment();
});

const STATS = 'GET /admin-api/ai/stats';

/** An outbox row in `status` (an event about a job that need not exist: stats only count rows). */
async function insertOutboxEvent(status: 'pending' | 'dead' | 'published') {
  const id = newId();
  await getPrisma().outboxEvent.create({
    data: { id, eventType: 'ai.job.enqueue', aggregateType: 'AiJob', aggregateId: newId(), dedupeKey: `test:${id}`, payload: {}, status },
  });
}

describe('GET /admin-api/ai/stats', () => {
  it('counts jobs per state and type, the outbox backlog per status, and each queue and DLQ depth', async () => {
    await insertJob({ lifecycleStatus: 'running' });
    await insertJob({ lifecycleStatus: 'failed' });
    await insertJob({ jobType: 'quiz_generation', lifecycleStatus: 'failed' });
    await insertOutboxEvent('pending');
    await insertOutboxEvent('dead');
    const created = await invoke(userHandler, apiEvent('POST /api/ai/feynman-evaluations', {
      claims: userClaims('user-1'), body: { concept: 'Gravity', explanation: 'Masses attract.' },
    }));
    expect(created.status).toBe(202);
    await createSqsClient().send(new SendMessageCommand({
      QueueUrl: env.queues.background.deadLetterQueueUrl, MessageBody: '{"jobId":"x"}', MessageGroupId: 'g', MessageDeduplicationId: 'd1',
    }));

    const res = await invoke(adminHandler, apiEvent(STATS, { claims: adminClaims() }));
    expect(res.status).toBe(200);
    const stats = statsResponseSchema.parse(res.body);
    expect(stats.jobs.byStatus).toEqual({ queued: 1, running: 1, succeeded: 0, failed: 2, cancelled: 0 });
    expect(stats.jobs.byType.synthetic_job).toEqual({ queued: 0, running: 1, succeeded: 0, failed: 1, cancelled: 0 });
    expect(stats.jobs.byType.quiz_generation?.failed).toBe(1);
    expect(stats.jobs.byType.feynman_evaluation?.queued).toBe(1);
    // Exact for the backlog and give-ups (the create's own enqueue row was published by its eager dispatch).
    expect(stats.outbox.byStatus).toMatchObject({ pending: 1, processing: 0, failed: 0, dead: 1, published: 1 });
    expect(stats.outbox.publishedCapped).toBe(false);
    const byName = Object.fromEntries(stats.queues.map((q) => [q.queueName, q]));
    expect(byName.interactive).toEqual({
      queueName: 'interactive', unavailable: false,
      queue: { approximateMessages: 1, approximateMessagesNotVisible: 0 },
      deadLetterQueue: { approximateMessages: 0, approximateMessagesNotVisible: 0 },
    });
    expect(byName.background?.deadLetterQueue.approximateMessages).toBe(1);
  });

  it('counts published outbox rows exactly from the index, not from InnoDB\'s stale table estimate, up to a cap', { timeout: 60_000 }, async () => {
    const stats = async () => statsResponseSchema.parse((await invoke(adminHandler, apiEvent(STATS, { claims: adminClaims() }))).body).outbox;
    // Statistics as a fresh table has them (no recalculation): information_schema's TABLE_ROWS lags behind.
    await withStaleStatistics(['OutboxEvent'], async () => {
      for (let i = 0; i < 3; i += 1) await insertOutboxEvent('published');
      await insertOutboxEvent('pending');
      expect(await stats()).toEqual({ byStatus: { pending: 1, processing: 0, published: 3, failed: 0, dead: 0 }, publishedCapped: false });
    });
    const digits = `(${Array.from({ length: 10 }, (_, d) => `SELECT ${d} AS d`).join(' UNION ALL ')})`;
    await (await rawDb()).query(`
      INSERT INTO OutboxEvent (id, eventType, aggregateType, aggregateId, dedupeKey, payload, status, availableAt, createdAt, updatedAt)
      SELECT CONCAT('01PB', LPAD(i, 22, '0')), 'ai.job.enqueue', 'AiJob', 'a', CONCAT('pub:', i), '{}', 'published', NOW(3), NOW(3), NOW(3)
      FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d + 100000 * g.d AS i
            FROM ${digits} a, ${digits} b, ${digits} c, ${digits} e, ${digits} f, ${digits} g) n
      WHERE i < ${PUBLISHED_COUNT_CAP}`);
    expect(await stats()).toMatchObject({ byStatus: { published: PUBLISHED_COUNT_CAP }, publishedCapped: true });
  });

  it('counts finished jobs per hour over the last 24 hours, oldest first, each hour by outcome', async () => {
    await insertJob({ lifecycleStatus: 'succeeded', finishedAt: new Date() });
    await insertJob({ lifecycleStatus: 'failed', finishedAt: new Date() });
    await insertJob({ lifecycleStatus: 'failed', finishedAt: new Date(Date.now() - 3 * 3_600_000) });
    await insertJob({ lifecycleStatus: 'cancelled', finishedAt: new Date(Date.now() - 30 * 3_600_000) });
    const stats = statsResponseSchema.parse((await invoke(adminHandler, apiEvent(STATS, { claims: adminClaims() }))).body);
    const { perHour, last24h } = stats.jobs.finished;
    expect(perHour).toHaveLength(24);
    expect(perHour.map((h) => h.hour)).toEqual([...perHour.map((h) => h.hour)].sort());
    const hourOf = (msAgo: number) => new Date(Math.floor((Date.now() - msAgo) / 3_600_000) * 3_600_000).toISOString();
    expect(perHour.at(-1)).toEqual({ hour: hourOf(0), byStatus: { succeeded: 1, failed: 1, cancelled: 0 } });
    expect(perHour.find((h) => h.hour === hourOf(3 * 3_600_000))?.byStatus).toEqual({ succeeded: 0, failed: 1, cancelled: 0 });
    // The 30-hour-old job is outside; the hours add up to the 24 h window.
    const sum = (k: 'succeeded' | 'failed' | 'cancelled') => perHour.reduce((n, h) => n + h.byStatus[k], 0);
    expect({ succeeded: sum('succeeded'), failed: sum('failed'), cancelled: sum('cancelled') }).toEqual(last24h.byStatus);
    expect(last24h.byStatus).toEqual({ succeeded: 1, failed: 2, cancelled: 0 });
  });

  it('reports null depths with unavailable: true when SQS cannot be reached, and still the database counts', async () => {
    await insertJob();
    const handler = createAdminApiHandler({ sqs: createStatsSqsClient(await deadEndpointEnv()) });
    const res = await invoke(handler, apiEvent(STATS, { claims: adminClaims() }));
    expect(res.status).toBe(200);
    const stats = statsResponseSchema.parse(res.body);
    expect(stats.jobs.byStatus.queued).toBe(1);
    for (const q of stats.queues) {
      expect(q).toMatchObject({ unavailable: true, queue: { approximateMessages: null, approximateMessagesNotVisible: null } });
    }
  });

  it('marks a queue unavailable when its dead-letter queue URL is not configured', async () => {
    const queues = queueEndpointsFromEnv({ ...process.env, INTERACTIVE_DLQ_URL: '' });
    const res = await invoke(createAdminApiHandler({ queues }), apiEvent(STATS, { claims: adminClaims() }));
    const interactive = statsResponseSchema.parse(res.body).queues.find((q) => q.queueName === 'interactive');
    expect(interactive).toMatchObject({ unavailable: true, deadLetterQueue: { approximateMessages: null } });
    expect(interactive?.queue.approximateMessages).not.toBeNull();
  });
});

describe('the stats SQS client', () => {
  it('gives up on a queue endpoint that accepts connections and never answers (no hang)', async () => {
    const { GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
    const { silentEndpoint } = await import('../helpers/ports.ts');
    const silent = await silentEndpoint();
    try {
      const sqs = createStatsSqsClient({ ...process.env, AWS_ENDPOINT_URL_SQS: silent.url });
      const err = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: `${silent.url}/000000000000/q.fifo`, AttributeNames: ['All'] })).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'TimeoutError' });
    } finally {
      await silent.close();
    }
  }, 20_000);
});
