/**
 * `watchJob` (lib/client/watch-job.ts) against the real local runtime: jobs run by its consumers against the mock
 * provider at a streaming pace, their pushes through its realtime hub, their log over HTTP. What a watcher is
 * told must be the log exactly — whenever it starts, whatever pushes it misses or gets twice — and the final
 * attempt's text must be the provider's answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRealtimeClient, type RealtimeError } from '../../lib/client/realtime-client.ts';
import { WatchJobError } from '../../lib/client/watch-job.ts';
import { realtimeConfigSchema } from '../../lib/api/response-schemas.ts';
import { channelOfJob } from '../../lib/realtime/server-channel.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';
import { wholeLog, textOf } from '../helpers/stream-helpers.ts';
import { condition, perturbingClient, watchOnRuntime } from '../helpers/watch-recorder.ts';

let e: E2e;
let alice: string;
let bob: string;
beforeAll(async () => {
  e = await startE2e();
  [alice, bob] = await Promise.all([e.token('alice'), e.token('bob')]);
}, 60_000);
afterAll(async () => e?.stop());

/** A Feynman evaluation of alice's that the mock streams at `tps` tokens a second (its feedback grows for seconds). */
async function streamingJob(concept: string, tps = 20): Promise<string> {
  const res = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: { concept, explanation: `Mass attracts mass, always. [tps:${tps}]` } });
  expect(res.status).toBe(202);
  return res.body.jobId as string;
}

/** The feedback the job's result holds, and the one the provider's final answer held. */
async function finalFeedback(jobId: string, concept: string): Promise<{ result: string; provider: string }> {
  const result = await e.api('GET', `/api/ai/feynman-evaluations/${jobId}`, { token: alice });
  const answers = e.runtime.mock!.answers.filter((a) => a.content.includes(concept));
  return { result: result.body.evaluation.feedback, provider: JSON.parse(answers.at(-1)!.content).feedback };
}

describe('the realtime configuration route', () => {
  it("tells a caller where to subscribe and the channels of the caller's own jobs", async () => {
    const res = await e.api('GET', '/api/ai/realtime', { token: alice });
    expect(res.status).toBe(200);
    const config = realtimeConfigSchema.parse(res.body);
    expect(config).toMatchObject({ available: true, httpEndpoint: e.runtime.realtime!.httpEndpoint, realtimeUrl: e.runtime.realtime!.realtimeUrl });
    expect(`${config.channelPrefix}01ARZ3NDEKTSV4RRFFQ69G5FAV`).toBe(channelOfJob('alice', '01ARZ3NDEKTSV4RRFFQ69G5FAV'));
    expect((await e.api('GET', '/api/ai/realtime')).status).toBe(401);
  });
});

describe('watchJob', () => {
  it('started mid-stream: subscribes, backfills, and is told every entry once — the final text is the provider\'s answer', async () => {
    const concept = 'Gravity mid-stream';
    const jobId = await streamingJob(concept);
    // Start once the log already holds some of the answer.
    const started = Date.now();
    while (!(await wholeLog(jobId)).some((x) => x.type === 'text')) {
      if (Date.now() - started > 30_000) throw new Error('the job never streamed');
      await new Promise((r) => setTimeout(r, 20));
    }
    const client = perturbingClient(e.runtime.realtime!.httpEndpoint, () => alice, (push) => [push]);
    const { record, done } = watchOnRuntime(e, jobId, alice, { realtimeClient: client });
    const { status, state } = await done;
    client.close();
    expect(status).toMatchObject({ status: 'succeeded', resultUrl: `/api/ai/feynman-evaluations/${jobId}` });
    expect(record.transports[0]).toBe('realtime');
    expect(client.delivered()).toBeGreaterThan(0);
    const log = await wholeLog(jobId);
    expect(state.lastSeq).toBe(log.at(-1)!.seq);
    expect(record.statuses).toEqual(log.filter((x) => x.type === 'status'));
    expect(record.text.feedback).toBe(textOf(log, 'feedback'));
    expect(record.items.gaps).toEqual(log.filter((x) => x.type === 'item').map((x) => x.type === 'item' && x.item));
    const { result, provider } = await finalFeedback(jobId, concept);
    expect(record.text.feedback).toBe(result);
    expect(record.text.feedback).toBe(provider);
  });

  it('loses nothing and shows nothing twice when pushes are lost, repeated or late', async () => {
    const concept = 'Gravity lossy';
    const jobId = await streamingJob(concept, 40);
    let held: Parameters<Parameters<typeof perturbingClient>[2]>[0] | undefined;
    // Every third push lost, every other one repeated, every fifth held back and delivered after the next.
    const client = perturbingClient(e.runtime.realtime!.httpEndpoint, () => alice, (push, n) => {
      if (n % 3 === 2) return [];
      if (n % 5 === 4) {
        held = push;
        return [];
      }
      const late = held ? [held] : [];
      held = undefined;
      return n % 2 === 1 ? [push, push, ...late] : [push, ...late];
    });
    const { record, done } = watchOnRuntime(e, jobId, alice, { realtimeClient: client, quietResyncMs: 500 });
    const { status } = await done;
    client.close();
    expect(status.status).toBe('succeeded');
    expect(client.delivered()).toBeGreaterThan(3);
    const log = await wholeLog(jobId);
    expect(record.statuses.map((s) => s.seq)).toEqual(log.filter((x) => x.type === 'status').map((x) => x.seq));
    expect(record.deltas.join('')).toBe(textOf(log, 'feedback'));
    expect(record.text.feedback).toBe((await finalFeedback(jobId, concept)).provider);
  });

  it("refuses another user's job on both paths: 404 from the API, subscribe_error from the hub", async () => {
    const jobId = await streamingJob('Gravity private', 200);
    await expect(watchOnRuntime(e, jobId, bob).done).rejects.toMatchObject({ name: 'WatchJobError', status: 404, code: 'JOB_NOT_FOUND' } satisfies Partial<WatchJobError>);
    const refused = new Promise<RealtimeError>((resolve) => {
      const client = createRealtimeClient({ httpEndpoint: e.runtime.realtime!.httpEndpoint, getToken: () => bob });
      client.subscribe(channelOfJob('alice', jobId), { onPush: () => undefined, onError: (err) => { client.close(); resolve(err); } });
    });
    expect(await refused).toMatchObject({ errorType: 'UnauthorizedException', retryable: false });
    await e.waitForTerminal(jobId, alice);
  });

  it('ends with `cancelled` when the job is cancelled mid-stream', async () => {
    const jobId = await streamingJob('Gravity cancelled', 10);
    const events = condition();
    const { record, done } = watchOnRuntime(e, jobId, alice, {}, events.tick);
    await events.until(() => (record.text.feedback ?? '').length > 0, 'the first text');
    const cancel = await e.api('POST', `/api/ai/jobs/${jobId}/cancel`, { token: alice });
    expect(cancel.status).toBe(202);
    const { status } = await done;
    expect(status.status).toBe('cancelled');
    expect(record.statuses.at(-1)!.status).toBe('cancelled');
    expect((await wholeLog(jobId)).at(-1)).toMatchObject({ type: 'status', status: 'cancelled' });
  });

  it('is told a new attempt began when the provider cuts the stream, and ends with the final attempt\'s full answer', async () => {
    const concept = 'Gravity cut';
    const mock = e.runtime.mock!;
    mock.setScenario('cut:35');
    const jobId = await streamingJob(concept, 40);
    const events = condition();
    const { record, done } = watchOnRuntime(e, jobId, alice, {}, events.tick);
    try {
      // The first attempt's request has chosen its scenario once it streams: the next one answers whole.
      await events.until(() => (record.text.feedback ?? '').length > 0, 'the first attempt\'s text');
    } finally {
      mock.setScenario(undefined);
    }
    const { status, state } = await done;
    expect(status.status).toBe('succeeded');
    expect(record.attempts).toEqual([1, 2]);
    expect(record.discarded[1]!.length).toBeGreaterThan(0);
    const { result, provider } = await finalFeedback(jobId, concept);
    expect(state.text.feedback).toBe(provider);
    expect(record.text.feedback).toBe(provider);
    expect(result).toBe(provider);
    const failedAttempt = record.statuses.find((s) => s.status === 'queued' && s.error);
    expect(failedAttempt?.error?.code).toBe('PROVIDER_UNAVAILABLE');
  });
});
