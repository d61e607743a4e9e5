/**
 * Nothing a crashed local runtime had accepted is lost: SIGKILL it with jobs queued, running and between
 * attempts, start it again on the same database (its in-memory queues are gone), and every job ends terminal
 * within the bound, each succeeded job projected exactly once, no outbox row left unsent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { loadOrCreateLocalJwtKey, signLocalToken } from '../../lib/api/local-jwt.ts';
import { CONSUMER_BATCH_SIZE, CONSUMER_CONCURRENCY } from '../../lib/dev/local-runtime/consumers.ts';
import { DEFAULT_JWT_KEY_FILE, LOCAL_TOKEN_AUDIENCE } from '../../lib/dev/local-runtime/runtime.ts';
import { startMockAiServer } from '../../lib/dev/mock-ai-server.ts';
import { jobTypeMockResponder } from '../../lib/dev/mock-responder.ts';

const RUNTIME = fileURLToPath(new URL('../helpers/runtime-process.ts', import.meta.url));
/** Restart → every job terminal: the documented local bound (boot re-enqueue + one job's run + reaper). */
const BOUND_MS = 60_000;
const db = getPrisma();
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

async function startRuntime(mockUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', RUNTIME], {
    // A retry overdue by this much is re-enqueued. After the restart a recovered job can wait 10 s (the slow jobs'
    // length) for a free record, past this bound: its re-enqueue is a harmless duplicate, and the job fails only if
    // that re-enqueue waits the queue's bound (5 min), so none of the waiting jobs fails.
    env: { ...process.env, MOCK_AI_BASE_URL: mockUrl, AWS_ENDPOINT_URL: inject('awsEndpoint'), REAPER_OVERDUE_RETRY_MS: '5000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  for await (const line of createInterface({ input: child.stdout! })) {
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1];
    if (url) {
      child.stdout!.resume();
      return { child, url };
    }
  }
  throw new Error('the runtime exited before it was ready');
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function post(url: string, path: string, body: unknown): Promise<string> {
  const sub = `crash-${randomUUID()}`; // one user per job: per-user active-job limits stay out of the way
  const token = await signLocalToken(await loadOrCreateLocalJwtKey(DEFAULT_JWT_KEY_FILE), { sub, admin: false, ...LOCAL_TOKEN_AUDIENCE });
  const res = await fetch(`${url}${path}`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { jobId: string }).jobId;
}

/** An interactive job; the explanation may carry mock markers. */
const feynman = (url: string, explanation: string) => post(url, '/api/ai/feynman-evaluations', { concept: 'Osmosis', explanation });

const jobsIn = (ids: string[]) => db.aiJob.findMany({ where: { id: { in: ids } } });

describe('SIGKILL of the local runtime', () => {
  it('leaves no accepted job open after a restart on the same database', async () => {
    const mock = await startMockAiServer({ respond: jobTypeMockResponder });
    try {
      const first = await startRuntime(mock.url);
      // Between attempts: a background job whose first call fails; its retry is due 5 s later.
      const between = [await post(first.url, '/api/ai/flashcard-generations', { sourceText: `Cells divide by mitosis. [scenario:fail_once:${randomUUID()}]` })];
      await until('a job between attempts', 30_000, async () =>
        (await jobsIn(between)).every((j) => j.lifecycleStatus === 'running' && j.lockedBy === null && j.errorCode !== null) || undefined);
      // Running: slow jobs fill the records the interactive queue may have in flight, so the next two stay queued
      // (in the runtime's SQS server, which dies with it).
      const slots = CONSUMER_CONCURRENCY.interactive * CONSUMER_BATCH_SIZE;
      const running = await Promise.all(Array.from({ length: slots }, (_, n) => feynman(first.url, `Water crosses membrane ${n}. [sleep:10000]`)));
      await until(`${slots} jobs running`, 30_000, async () =>
        (await jobsIn(running)).every((j) => j.lifecycleStatus === 'running' && j.lockedBy !== null) || undefined);
      const queued = [await feynman(first.url, 'Just created, A.'), await feynman(first.url, 'Just created, B.')];
      first.child.kill('SIGKILL');
      await once(first.child, 'exit');
      const all = [...running, ...between, ...queued];
      const atKill = Object.fromEntries((await jobsIn(all)).map((j) => [j.id, `${j.lifecycleStatus}${j.lockedBy ? '+lease' : ''}`]));
      expect([...running, ...between, ...queued].map((id) => atKill[id])).toEqual([
        ...running.map(() => 'running+lease'), 'running', 'queued', 'queued',
      ]);

      const restarted = Date.now();
      const second = await startRuntime(mock.url);
      const done = await until('every job terminal and the outbox drained', BOUND_MS, async () => {
        const jobs = await jobsIn(all);
        const pending = await db.outboxEvent.count({ where: { status: { not: 'published' } } });
        return jobs.every((j) => ['succeeded', 'failed', 'cancelled'].includes(j.lifecycleStatus)) && pending === 0 ? jobs : undefined;
      });
      const elapsedMs = Date.now() - restarted;
      const states = Object.values(atKill).reduce<Record<string, number>>((n, state) => ({ ...n, [state]: (n[state] ?? 0) + 1 }), {});
      console.log(`restart → last accepted job terminal: ${elapsedMs} ms (states at kill: ${JSON.stringify(states)})`);
      // A job that did not succeed shows why.
      expect(done.map((j) => (j.lifecycleStatus === 'succeeded' ? 'succeeded' : `${j.lifecycleStatus} ${j.errorCode}: ${j.internalErrorMessage ?? j.publicErrorMessage}`))).toEqual(all.map(() => 'succeeded'));
      for (const id of all) {
        expect(await db.aiJobTransition.count({ where: { jobId: id, toStatus: 'succeeded' } })).toBe(1);
        const rows = between.includes(id) ? await db.flashcard.count({ where: { jobId: id } }) : await db.feynmanEvaluation.count({ where: { jobId: id } });
        expect(await db.aiJobArtifact.count({ where: { jobId: id } })).toBe(rows);
        expect(await db.outboxEvent.count({ where: { aggregateId: id, eventType: 'ai.job.succeeded' } })).toBe(1);
      }
      expect(elapsedMs).toBeLessThan(BOUND_MS);
      second.child.kill('SIGINT');
      await once(second.child, 'exit');
    } finally {
      await mock.close();
    }
  }, 180_000);
});
