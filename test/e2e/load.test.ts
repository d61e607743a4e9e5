/** 200 jobs of mixed types from 100 users, created over HTTP, all reach a terminal state with one projection each. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';

let e: E2e;
beforeAll(async () => {
  e = await startE2e();
});
afterAll(async () => e.stop());

const KINDS = [
  { path: '/api/ai/feynman-evaluations', body: (i: number) => ({ concept: `Concept ${i}`, explanation: `Explanation number ${i}.` }) },
  { path: '/api/ai/quiz-generations', body: (i: number) => ({ sourceText: `Fact ${i}: the sky is blue.`, count: 2, difficulty: 'medium' }) },
  { path: '/api/ai/flashcard-generations', body: (i: number) => ({ sourceText: `Term ${i} means something.`, maxCards: 3 }) },
];

describe('load', () => {
  it('runs 200 mixed jobs to completion with exactly one projection each', async () => {
    const users = await Promise.all(Array.from({ length: 100 }, (_, u) => e.token(`load-user-${u}`)));
    const created: { id: string; token: string }[] = [];
    for (let batch = 0; batch < 200; batch += 20) {
      const responses = await Promise.all(Array.from({ length: 20 }, (_, k) => {
        const i = batch + k;
        const kind = KINDS[i % KINDS.length]!;
        const token = users[i % 100]!;
        return e.api('POST', kind.path, { token, body: kind.body(i) }).then((res) => ({ res, token }));
      }));
      for (const { res, token } of responses) {
        expect(res.status).toBe(202);
        created.push({ id: res.body.jobId, token });
      }
    }
    const finished = await Promise.all(created.map(({ id, token }) => e.waitForTerminal(id, token, 180_000)));
    expect(finished.map((j) => j.lifecycleStatus)).toEqual(Array(200).fill('succeeded'));
    const db = getPrisma();
    const ids = created.map((c) => c.id);
    const [feynman, artifacts, events] = await Promise.all([
      db.feynmanEvaluation.groupBy({ by: ['jobId'], where: { jobId: { in: ids } }, _count: true }),
      db.aiJobArtifact.groupBy({ by: ['jobId'], where: { jobId: { in: ids } }, _count: true }),
      db.outboxEvent.count({ where: { aggregateId: { in: ids }, eventType: 'ai.job.succeeded' } }),
    ]);
    expect(feynman.every((g) => g._count === 1)).toBe(true);
    expect(artifacts).toHaveLength(200);
    expect(await db.quizQuestion.count({ where: { jobId: { in: ids } } })).toBe(67 * 2);
    expect(events).toBe(200);
    // A job that needed a second attempt names why, so a failure here says what the first attempt met.
    const retried = await db.aiJobTransition.findMany({
      where: { jobId: { in: ids }, errorCode: { not: null } }, select: { jobId: true, errorCode: true, reason: true },
    });
    expect(retried).toEqual([]);
    expect(await db.aiJob.count({ where: { id: { in: ids }, attemptCount: 1 } })).toBe(200);
  }, 300_000);
});
