import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { countRows } from '../helpers/db.ts';
import { transitionsOf } from '../helpers/factories.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';

let h: EngineHarness;
const db = getPrisma();
beforeAll(async () => {
  h = await startEngineHarness();
});
afterAll(async () => h.close());

describe('a job through SQS → consumer → provider → projector', () => {
  it('runs synthetic_job to success with an artifact, usage row, succeeded event and audit trail', async () => {
    const job = await h.create({ input: { prompt: 'What is 2+2?' } });
    const { response, messages } = await h.deliver('interactive');
    expect(messages).toHaveLength(1);
    expect(response.batchItemFailures).toEqual([]);
    const done = await db.aiJob.findUniqueOrThrow({ where: { id: job.id } });
    expect(done).toMatchObject({ lifecycleStatus: 'succeeded', progress: 100, attemptCount: 1, modelProvider: 'mock', lockedBy: null });
    expect(done.outputHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await db.aiJobArtifact.findMany({ where: { jobId: job.id } })).toMatchObject([{ artifactType: 'SyntheticAnswer', artifactId: job.id }]);
    const usage = await db.aiUsageLog.findMany({ where: { jobId: job.id } });
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ attemptNo: 1, provider: 'mock', errorCode: null, credentialMode: 'platform_key' });
    expect(usage[0]!.totalTokens).toBeGreaterThan(0);
    expect(await countRows('OutboxEvent', 'eventType = ? AND aggregateId = ?', ['ai.job.succeeded', job.id])).toBe(1);
    expect((await transitionsOf(job.id)).map((t) => `${t.fromStatus}->${t.toStatus}`)).toEqual(['null->queued', 'queued->running', 'running->succeeded']);
  });

  it('projects a Feynman evaluation into its business table', async () => {
    const job = await h.create({ jobType: 'feynman_evaluation', input: { concept: 'Photosynthesis', explanation: 'Plants turn light, water and CO2 into sugar and oxygen.' } });
    await h.deliver('interactive');
    expect((await db.aiJob.findUniqueOrThrow({ where: { id: job.id } })).lifecycleStatus).toBe('succeeded');
    const rows = await db.feynmanEvaluation.findMany({ where: { jobId: job.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.score).toBeGreaterThanOrEqual(0);
    expect(await db.aiJobArtifact.count({ where: { jobId: job.id, artifactType: 'FeynmanEvaluation' } })).toBe(1);
  });

  it('projects quiz questions and flashcards from the background queue', async () => {
    const quiz = await h.create({ jobType: 'quiz_generation', input: { sourceText: 'The mitochondria is the powerhouse of the cell. It makes ATP.', count: 3, difficulty: 'easy' } });
    const cards = await h.create({ jobType: 'flashcard_generation', input: { sourceText: 'Paris is the capital of France. Berlin is the capital of Germany.' } });
    expect(quiz.queueName).toBe('background');
    await h.deliver('background');
    await h.deliver('background', 0);
    expect((await db.aiJob.findUniqueOrThrow({ where: { id: quiz.id } })).lifecycleStatus).toBe('succeeded');
    expect((await db.aiJob.findUniqueOrThrow({ where: { id: cards.id } })).lifecycleStatus).toBe('succeeded');
    expect(await db.quizQuestion.count({ where: { jobId: quiz.id } })).toBe(3);
    expect(await db.flashcard.count({ where: { jobId: cards.id } })).toBeGreaterThan(0);
    expect(await db.aiJobArtifact.count({ where: { jobId: quiz.id } })).toBe(3);
  });

  it('acknowledges a second delivery of a finished job without doing anything', async () => {
    const job = await h.create({ input: { prompt: 'once' } });
    await h.deliver('interactive');
    const requestsBefore = h.mock.requests.length;
    const { runJob } = await import('../../lib/engine/run-job.ts');
    const outcome = await runJob({ jobId: job.id, jobType: 'synthetic_job', idempotencyKey: `ai.job.enqueue:${job.id}`, createdAt: job.createdAt.toISOString() }, h.engine);
    expect(outcome).toEqual({ kind: 'acknowledged', jobId: job.id, reason: 'terminal' });
    expect(h.mock.requests.length).toBe(requestsBefore);
    expect(await db.aiJobArtifact.count({ where: { jobId: job.id } })).toBe(1);
  });
});
