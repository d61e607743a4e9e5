/**
 * Why a job waits, where people see it: a job the engine parked (no route could take its call, or a spending cap
 * it must wait out) shows `waitingFor` {reason, until} to its owner on the stream
 * (`GET /api/ai/jobs/{jobId}/stream`, JobStatusResponse being frozen) and to admins in the job detail
 * (`GET /admin-api/ai/jobs/{jobId}`). Parked by the real engine on the real database and SQS-API server.
 */
import './api-env.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { handler as adminHandler } from '../../functions/api-admin.ts';
import { handler as streamHandler } from '../../functions/api-stream.ts';
import { adminJobDetailSchema } from '../../lib/api/response-schemas.ts';
import { costOf } from '../../lib/ai/pricing.ts';
import { SqlCapacityGate } from '../../lib/capacity/gate.ts';
import { DEFAULT_MODEL_LIMITS, ProviderLimitsConfig } from '../../lib/capacity/limits-config.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';
import { defineJob } from '../../lib/jobs/definition.ts';
import { streamPageSchema } from '../../lib/stream/protocol.ts';
import { adminClaims, apiEvent, invoke, userClaims } from '../helpers/api-events.ts';
import { NO_CAPS } from '../helpers/capacity.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

const harnesses: EngineHarness[] = [];
afterAll(async () => Promise.all(harnesses.map((h) => h.close())));

async function views(jobId: string, owner: string) {
  const stream = await invoke(streamHandler, apiEvent('GET /api/ai/jobs/{jobId}/stream', { claims: userClaims(owner), pathParameters: { jobId } }));
  expect(stream.status).toBe(200);
  const detail = await invoke(adminHandler, apiEvent('GET /admin-api/ai/jobs/{jobId}', { claims: adminClaims(), pathParameters: { jobId } }));
  expect(detail.status).toBe(200);
  return { last: streamPageSchema.parse(stream.body).entries.at(-1), detail: adminJobDetailSchema.parse(detail.body) };
}

describe('a parked job shows why it waits', () => {
  it('for provider capacity (a 429 cooled its model down): on its stream and in the admin detail, until when', async () => {
    const h = await startEngineHarness();
    harnesses.push(h);
    const job = await h.create({ userId: 'wanda', input: { prompt: 'busy [scenario:rate_limit:20]' } });
    await h.deliver();
    const { last, detail } = await views(job.id, 'wanda');
    expect(last).toMatchObject({ type: 'status', status: 'queued', attempt: 0, waitingFor: { reason: 'provider_capacity', until: expect.any(String) } });
    const until = (last as { waitingFor: { until: string } }).waitingFor.until;
    expect(detail).toMatchObject({ lifecycleStatus: 'running', attemptCount: 0 });
    expect(detail.waitingFor).toEqual({ reason: 'provider_capacity', until: expect.any(String), since: expect.any(String), provider: 'mock', model: 'mock-chat' });
    // The same instant, as the engine's process (the stream entry) and the database (the waiting row) each computed it.
    expect(Math.abs(Date.parse(detail.waitingFor!.until) - Date.parse(until))).toBeLessThan(1_000);
    expect(Date.parse(until) - Date.parse(detail.waitingFor!.since)).toBeGreaterThanOrEqual(19_000);
  });

  it("for a spending cap (a background job waits for the day's reset): reason spend_cap, until midnight UTC", async () => {
    const background = defineJob({ ...syntheticJob, jobType: 'background_synthetic_job', queue: { ...syntheticJob.queue, queueName: 'background' } });
    const priced = (_route: unknown, usage: { promptTokens: number; completionTokens: number }) => costOf({ provider: 'deepseek', model: 'deepseek-chat' }, usage);
    const capacity = new SqlCapacityGate({ limits: new ProviderLimitsConfig(DEFAULT_MODEL_LIMITS), caps: { ...NO_CAPS, platform_day: '0.0001' }, price: priced });
    const h = await startEngineHarness({ capacity, registry: testRegistry(background) });
    harnesses.push(h);
    const job = await h.create({ userId: 'xavier', jobType: 'background_synthetic_job', input: { prompt: 'tomorrow then' } });
    await h.deliver('background');
    const { last, detail } = await views(job.id, 'xavier');
    expect(last).toMatchObject({ status: 'queued', waitingFor: { reason: 'spend_cap' } });
    const until = new Date((last as { waitingFor: { until: string } }).waitingFor.until);
    expect([until.getUTCHours(), until.getUTCMinutes()]).toEqual([0, 0]);
    expect(detail.waitingFor).toMatchObject({ reason: 'spend_cap', provider: null, model: null });
    expect(Math.abs(Date.parse(detail.waitingFor!.until) - until.getTime())).toBeLessThan(1_000);
  });

  it('a job that is not waiting has none', async () => {
    const h = harnesses[0]!;
    const job = await h.create({ userId: 'yara', input: { prompt: 'no trouble' } });
    const { detail } = await views(job.id, 'yara');
    expect(detail).toMatchObject({ lifecycleStatus: 'queued', waitingFor: null });
  });
});
