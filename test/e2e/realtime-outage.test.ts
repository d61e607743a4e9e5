/**
 * The realtime hub going away mid-stream (lib/realtime/handler-publishing.ts, docs/streaming.md "Publisher"): the
 * job goes on and succeeds, every handler keeps answering, and a watcher that was subscribed falls back to the
 * long-poll and still gets the whole log — the pushes were only hints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';
import { textOf, wholeLog } from '../helpers/stream-helpers.ts';
import { condition, watchOnRuntime } from '../helpers/watch-recorder.ts';

let e: E2e;
let alice: string;
beforeAll(async () => {
  e = await startE2e();
  alice = await e.token('alice');
}, 60_000);
afterAll(async () => e?.stop());

async function feynman(concept: string, marker: string): Promise<string> {
  const res = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: { concept, explanation: `Mass attracts mass. ${marker}` } });
  expect(res.status).toBe(202);
  return res.body.jobId as string;
}

describe('the realtime hub stopped mid-stream', () => {
  it('does not stop the job: it succeeds, the watcher falls back to the long-poll and gets the complete log', async () => {
    const concept = 'Gravity without a hub';
    const jobId = await feynman(concept, '[tps:15]');
    const events = condition();
    const { record, done } = watchOnRuntime(e, jobId, alice, {}, events.tick);
    await events.until(() => record.transports.includes('realtime') && (record.text.feedback ?? '').length > 0, 'live text');
    await e.runtime.realtime!.stop();
    await events.until(() => record.transports.at(-1) === 'long-poll', 'the fallback to the long-poll');

    // Handlers keep answering while their publishes fail: a cancel of another running job, through the API.
    const other = await feynman('Gravity cancelled without a hub', '[scenario:slow:60000]');
    while ((await e.api('GET', `/api/ai/jobs/${other}`, { token: alice })).body.lifecycleStatus !== 'running') await new Promise((r) => setTimeout(r, 20));
    expect((await e.api('POST', `/api/ai/jobs/${other}/cancel`, { token: alice })).status).toBe(202);

    const { status } = await done;
    expect(status.status).toBe('succeeded');
    const log = await wholeLog(jobId);
    expect(record.statuses).toEqual(log.filter((x) => x.type === 'status'));
    expect(record.text.feedback).toBe(textOf(log, 'feedback'));
    const result = await e.api('GET', `/api/ai/feynman-evaluations/${jobId}`, { token: alice });
    expect(record.text.feedback).toBe(result.body.evaluation.feedback);
    expect((await e.waitForTerminal(other, alice)).lifecycleStatus).toBe('cancelled');
  });

  it('leaves new watchers the long-poll: a job created after the hub stopped is watched to its end', async () => {
    const jobId = await feynman('Gravity after the hub', '[tps:100]');
    const { record, done } = watchOnRuntime(e, jobId, alice);
    expect((await done).status.status).toBe('succeeded');
    expect(record.transports).toEqual(['long-poll']);
    expect(record.text.feedback).toBe(textOf(await wholeLog(jobId), 'feedback'));
  });
});
