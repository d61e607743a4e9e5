import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as userHandler } from '../../functions/api-user.ts';
import { JOB_RESULT_READERS } from '../../lib/api/job-results.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { insertJob } from '../helpers/factories.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

function getResult(routeKey: string, jobId: string, sub = 'user-1') {
  return invoke(userHandler, apiEvent(routeKey, { claims: userClaims(sub), pathParameters: { jobId } }));
}

/** The business rows each type's projector would have written for a job. */
const WRITE_ROWS: Record<string, (jobId: string, userId: string) => Promise<unknown>> = {
  feynman_evaluation: (jobId, userId) => getPrisma().feynmanEvaluation.create({
    data: { id: newId(), jobId, userId, concept: 'Entropy', score: 72, gaps: ['no example'], feedback: 'Add an example.' },
  }),
  quiz_generation: (jobId, userId) => getPrisma().quizQuestion.createMany({
    data: [1, 0].map((ordinal) => ({
      id: newId(), jobId, userId, ordinal, question: `Q${ordinal}?`, options: ['a', 'b'], answerIndex: ordinal, explanation: 'because', difficulty: 'easy',
    })),
  }),
  flashcard_generation: (jobId, userId) => getPrisma().flashcard.createMany({
    data: [0, 1].map((ordinal) => ({ id: newId(), jobId, userId, ordinal, front: `F${ordinal}`, back: `B${ordinal}` })),
  }),
};

/** A succeeded job of `jobType` with its business rows. */
async function succeededJob(jobType: string, userId = 'user-1') {
  const job = await insertJob({ jobType, userId, lifecycleStatus: 'succeeded' });
  await WRITE_ROWS[jobType]!(job.id, userId);
  return job;
}

describe('result routes (owner only)', () => {
  it('GET /api/ai/feynman-evaluations/{jobId} returns the evaluation row', async () => {
    const job = await succeededJob('feynman_evaluation');
    const res = await getResult('GET /api/ai/feynman-evaluations/{jobId}', job.id);
    expect(res.status).toBe(200);
    JOB_RESULT_READERS.get('feynman_evaluation')!.schema.parse(res.body);
    expect(res.body).toMatchObject({ jobId: job.id, evaluation: { concept: 'Entropy', score: 72, gaps: ['no example'], feedback: 'Add an example.' } });
  });

  it('GET /api/ai/quiz-generations/{jobId} returns the questions in order', async () => {
    const job = await succeededJob('quiz_generation');
    const res = await getResult('GET /api/ai/quiz-generations/{jobId}', job.id);
    expect(res.status).toBe(200);
    JOB_RESULT_READERS.get('quiz_generation')!.schema.parse(res.body);
    expect(res.body.questions.map((q: { question: string }) => q.question)).toEqual(['Q0?', 'Q1?']);
    expect(res.body.questions[1]).toMatchObject({ options: ['a', 'b'], answerIndex: 1, difficulty: 'easy' });
  });

  it('GET /api/ai/flashcard-generations/{jobId} returns the cards in order', async () => {
    const job = await succeededJob('flashcard_generation');
    const res = await getResult('GET /api/ai/flashcard-generations/{jobId}', job.id);
    expect(res.status).toBe(200);
    JOB_RESULT_READERS.get('flashcard_generation')!.schema.parse(res.body);
    expect(res.body.flashcards).toEqual([
      { id: expect.any(String), ordinal: 0, front: 'F0', back: 'B0' },
      { id: expect.any(String), ordinal: 1, front: 'F1', back: 'B1' },
    ]);
  });

  it('reports another user\'s result as 404 JOB_NOT_FOUND', async () => {
    const job = await succeededJob('quiz_generation', 'user-2');
    const res = await getResult('GET /api/ai/quiz-generations/{jobId}', job.id, 'user-1');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('JOB_NOT_FOUND');
  });

  it('reports a job of another type under this route as 404 JOB_NOT_FOUND', async () => {
    const job = await succeededJob('flashcard_generation');
    const res = await getResult('GET /api/ai/quiz-generations/{jobId}', job.id);
    expect(res.status).toBe(404);
  });

  it.each(['queued', 'running', 'failed', 'cancelled'] as const)('answers a %s job with 409 JOB_RESULT_NOT_AVAILABLE', async (state) => {
    const job = await insertJob({ jobType: 'quiz_generation', lifecycleStatus: state });
    const res = await getResult('GET /api/ai/quiz-generations/{jobId}', job.id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('JOB_RESULT_NOT_AVAILABLE');
  });
});
