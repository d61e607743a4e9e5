/**
 * A realtime endpoint that accepts connections and never answers — the worst case for a publisher: every publish
 * hangs until its timeout (set to 60 s here). Each handler waits at most HANDLER_FLUSH_MS for its publishes
 * before it returns (lib/realtime/handler-publishing.ts), so jobs, batches and API requests go on at their pace,
 * and a watcher reads the complete log over HTTP.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REALTIME_ENDPOINT_ENV, REALTIME_TIMEOUT_ENV } from '../../lib/realtime/publisher-from-env.ts';
import { CONSUMER_BATCH_SIZE, CONSUMER_CONCURRENCY } from '../../lib/dev/local-runtime/consumers.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';
import { textOf, wholeLog } from '../helpers/stream-helpers.ts';
import { watchOnRuntime } from '../helpers/watch-recorder.ts';

const PUBLISH_TIMEOUT_MS = 60_000;
const saved = { endpoint: process.env[REALTIME_ENDPOINT_ENV], timeout: process.env[REALTIME_TIMEOUT_ENV] };
const sockets = new Set<net.Socket>();
let connections = 0;
const silent = net.createServer((socket) => {
  connections += 1;
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
  socket.resume(); // read the request, answer nothing
});

let e: E2e;
let alice: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  process.env[REALTIME_ENDPOINT_ENV] = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/event`;
  process.env[REALTIME_TIMEOUT_ENV] = String(PUBLISH_TIMEOUT_MS);
  e = await startE2e({ realtimePort: false });
  alice = await e.token('alice');
}, 60_000);
afterAll(async () => {
  await e?.stop();
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  for (const [key, value] of [[REALTIME_ENDPOINT_ENV, saved.endpoint], [REALTIME_TIMEOUT_ENV, saved.timeout]] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

async function feynman(concept: string, marker = '[tps:200]'): Promise<string> {
  return feynmanAs(alice, concept, marker);
}

async function feynmanAs(token: string, concept: string, marker = '[tps:200]'): Promise<string> {
  const res = await e.api('POST', '/api/ai/feynman-evaluations', { token, body: { concept, explanation: `Mass attracts mass. ${marker}` } });
  expect(res.status).toBe(202);
  return res.body.jobId as string;
}

describe('a realtime endpoint that never answers', () => {
  it('holds no consumer slot: more jobs than the records a queue may have in flight, each succeeds long before a publish could time out', async () => {
    // Were a batch to wait for its publishes (60 s), its records would stay in flight: once the queue's bound is
    // reached, the last job could not start within waitForTerminal's 20 s. One job a user (a user's active jobs are limited).
    const jobs = CONSUMER_CONCURRENCY.interactive * CONSUMER_BATCH_SIZE + 1;
    const users = await Promise.all(Array.from({ length: jobs }, (_, i) => e.token(`silent-${i}`)));
    const ids = await Promise.all(users.map((token, i) => feynmanAs(token, `Gravity silent ${i}`)));
    const ends = await Promise.all(ids.map((jobId, i) => e.waitForTerminal(jobId, users[i]!)));
    expect(ends.map((j) => j.lifecycleStatus)).toEqual(ids.map(() => 'succeeded'));
    expect(connections).toBeGreaterThan(0);
  });

  it('answers API requests that publish without waiting for the endpoint', async () => {
    const jobId = await feynman('Gravity silent cancel', '[scenario:slow:60000]');
    while ((await e.api('GET', `/api/ai/jobs/${jobId}`, { token: alice })).body.lifecycleStatus !== 'running') await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    const cancel = await e.api('POST', `/api/ai/jobs/${jobId}/cancel`, { token: alice });
    expect(cancel.status).toBe(202);
    // Far under the publish timeout: the handler returned after at most its flush bound.
    expect(Date.now() - started).toBeLessThan(PUBLISH_TIMEOUT_MS / 6);
    expect((await e.waitForTerminal(jobId, alice)).lifecycleStatus).toBe('cancelled');
  });

  it('leaves a watcher the log: it is told to subscribe there, cannot, and long-polls the job to its end', async () => {
    const config = await e.api('GET', '/api/ai/realtime', { token: alice });
    expect(config.body).toMatchObject({ available: true, httpEndpoint: process.env[REALTIME_ENDPOINT_ENV] });
    const jobId = await feynman('Gravity silent watch', '[tps:50]');
    const { record, done } = watchOnRuntime(e, jobId, alice);
    expect((await done).status.status).toBe('succeeded');
    expect(record.transports).not.toContain('realtime');
    const log = await wholeLog(jobId);
    expect(record.statuses).toEqual(log.filter((x) => x.type === 'status'));
    expect(record.text.feedback).toBe(textOf(log, 'feedback'));
  });
});
