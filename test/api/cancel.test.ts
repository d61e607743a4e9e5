import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as userHandler } from '../../functions/api-user.ts';
import { jobStatusResponseSchema } from '../../lib/api/response-schemas.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { insertJob, transitionsOf } from '../helpers/factories.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

function cancel(jobId: string, sub = 'user-1') {
  return invoke(userHandler, apiEvent('POST /api/ai/jobs/{jobId}/cancel', { claims: userClaims(sub), pathParameters: { jobId } }));
}

describe('POST /api/ai/jobs/{jobId}/cancel', () => {
  it('cancels a queued job at once: 200 with the cancelled status, audit row by api:<user>', async () => {
    const job = await insertJob();
    const res = await cancel(job.id);
    expect(res.status).toBe(200);
    expect(jobStatusResponseSchema.parse(res.body)).toMatchObject({ jobId: job.id, lifecycleStatus: 'cancelled', finishedAt: expect.any(String) });
    const last = (await transitionsOf(job.id)).at(-1);
    expect(last).toMatchObject({ fromStatus: 'queued', toStatus: 'cancelled', actor: 'api:user-1' });
  });

  it('requests cancellation of a running job: 202, still running, cancelRequestedAt set for the engine', async () => {
    const job = await insertJob({ lifecycleStatus: 'running' });
    const res = await cancel(job.id);
    expect(res.status).toBe(202);
    expect(res.body.lifecycleStatus).toBe('running');
    const row = await getPrisma().aiJob.findUniqueOrThrow({ where: { id: job.id } });
    expect(row.cancelRequestedAt).toBeInstanceOf(Date);
    expect((await cancel(job.id)).status).toBe(202);
  });

  it.each(['succeeded', 'failed'] as const)('refuses a %s job: 409 JOB_NOT_CANCELLABLE', async (state) => {
    const job = await insertJob({ lifecycleStatus: state });
    const res = await cancel(job.id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('JOB_NOT_CANCELLABLE');
  });

  it('refuses a cancelled job: 409 JOB_ALREADY_CANCELLED', async () => {
    const job = await insertJob({ lifecycleStatus: 'cancelled' });
    const res = await cancel(job.id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('JOB_ALREADY_CANCELLED');
  });

  it('reports another user\'s job as 404 JOB_NOT_FOUND and leaves it alone', async () => {
    const job = await insertJob({ userId: 'user-2' });
    const res = await cancel(job.id, 'user-1');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('JOB_NOT_FOUND');
    expect((await getPrisma().aiJob.findUniqueOrThrow({ where: { id: job.id } })).lifecycleStatus).toBe('queued');
  });
});
