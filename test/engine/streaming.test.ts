/**
 * The model's output streamed through the engine: previews of each attempt fed to its stream segment (an in-test
 * AttemptStream), the provider's raw stream from the local mock over HTTP, jobs on the real database and queues.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { createKmsClient } from '../../lib/credentials/aws-clients.ts';
import { storeUserKey } from '../../lib/credentials/user-credential-repository.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { jobTypeMockResponder } from '../../lib/dev/mock-responder.ts';
import type { MockAnswer, MockRespond } from '../../lib/dev/mock-ai-server.ts';
import { defineJob } from '../../lib/jobs/definition.ts';
import { hashCanonical } from '../../lib/jobs/canonical-json.ts';
import { requestCancel } from '../../lib/jobs/cancellation.ts';
import { redactSnapshot } from '../../lib/jobs/redaction.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';
import { runJob } from '../../lib/engine/run-job.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { previewRecorder } from '../helpers/preview-recorder.ts';
import { waitFor } from '../helpers/ports.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

const db = getPrisma();

/** synthetic_job that gives each provider call 1 s to its first token, and one attempt. */
const firstTokenJob = defineJob({
  ...syntheticJob,
  jobType: 'first_token_job',
  execution: { ...syntheticJob.execution, firstTokenTimeoutMs: 1_000, maxRetries: 0 },
});

/** synthetic_job whose `answer` streams and whose output is redacted. */
const redactedStreamingJob = defineJob({
  ...syntheticJob,
  jobType: 'redacted_streaming_job',
  security: { ...syntheticJob.security, outputRedaction: true },
  streaming: { text: ['answer'] },
});

const KEY = 'sk-proj-AbCdEf0123456789_xyz-QRS';
const LEAKY_ANSWER = `Use ${KEY} with "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123", then rotate it.`;
/** The job types' mock answers, except a prompt saying LEAK gets an answer quoting secrets. */
const respond: MockRespond = (ctx) =>
  ctx.messages.at(-1)!.content.includes('LEAK') ? { answer: LEAKY_ANSWER, echo: 'leak' } : jobTypeMockResponder(ctx);

const recorder = previewRecorder();
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({
    registry: testRegistry(firstTokenJob, redactedStreamingJob),
    primary: { respond },
    mock: { respond },
    engine: { openAttemptStream: recorder.open },
  });
});
afterEach(() => h.primary!.setScenario(undefined));
afterAll(async () => h.close());

const ledger = (jobId: string) => db.aiUsageLog.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
/** The one complete answer `server` sent whose content contains `marker`. */
function answerWith(answers: MockAnswer[], marker: string): MockAnswer {
  const found = answers.filter((a) => a.content.includes(marker));
  expect(found).toHaveLength(1);
  return found[0]!;
}
const feynman = (concept: string, explanation = 'Disorder tends to increase in a closed system.') =>
  h.create({ jobType: 'feynman_evaluation', input: { concept, explanation } });

describe('what a job type streams', () => {
  it("Feynman: the feedback previews add up to the provider's feedback, the gap items to its gaps; the ledger has the final usage chunk", async () => {
    const created = await feynman('Streaming entropy');
    const done = await h.runUntilTerminal(created.id);
    expect(done).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1, modelProvider: 'openai-compat' });
    const sent = answerWith(h.primary!.answers, 'Streaming entropy');
    const answer = JSON.parse(sent.content) as { feedback: string; gaps: string[] };
    expect(sent.streamed).toBe(true);
    expect(recorder.text(created.id, 1, 'feedback')).toBe(answer.feedback);
    expect(recorder.items(created.id, 1, 'gaps')).toEqual(answer.gaps.map((g, i) => [i, g]));
    expect(recorder.of(created.id)).toEqual([expect.objectContaining({ attempt: 1, closed: true, statusAtClose: 'running', afterClose: 0 })]);
    expect((await ledger(created.id)).map((u) => [u.provider, u.errorCode, u.promptTokens, u.completionTokens, u.totalTokens])).toEqual([
      ['openai-compat', null, sent.usage!.prompt_tokens, sent.usage!.completion_tokens, sent.usage!.total_tokens],
    ]);
  });

  it('quiz and flashcards: each question or card is previewed once, in order, exactly as the provider wrote it', async () => {
    const source = 'Quasars shine brightly. Pulsars spin fast. Magnetars are strongly magnetic.';
    const quiz = await h.create({ jobType: 'quiz_generation', input: { sourceText: source, count: 3, difficulty: 'easy' } });
    const deck = await h.create({ jobType: 'flashcard_generation', input: { sourceText: `Deck: ${source}`, maxCards: 3 } });
    expect(await h.runUntilTerminal(quiz.id, 'background')).toMatchObject({ lifecycleStatus: 'succeeded' });
    expect(await h.runUntilTerminal(deck.id, 'background')).toMatchObject({ lifecycleStatus: 'succeeded' });
    const questions = (JSON.parse(answerWith(h.primary!.answers, '"questions"').content) as { questions: unknown[] }).questions;
    const cards = (JSON.parse(answerWith(h.primary!.answers, 'Deck:').content) as { cards: unknown[] }).cards;
    expect(questions).toHaveLength(3);
    expect(recorder.items(quiz.id, 1, 'questions')).toEqual(questions.map((q, i) => [i, q]));
    expect(recorder.items(deck.id, 1, 'cards')).toEqual(cards.map((c, i) => [i, c]));
    expect(recorder.of(quiz.id)[0]!.previews.every((p) => p.type === 'item')).toBe(true);
  });

  it('a type that declares no streaming opens no stream segment', async () => {
    const created = await h.create({ input: { prompt: 'no preview for me' } });
    expect(await h.runUntilTerminal(created.id)).toMatchObject({ lifecycleStatus: 'succeeded' });
    expect(recorder.of(created.id)).toEqual([]);
  });

  it('with output redaction, the previews show the answer as the final output holds it, and no part of a secret', async () => {
    const created = await h.create({ jobType: 'redacted_streaming_job', input: { prompt: 'LEAK a key [tps:500]' } });
    const done = await h.runUntilTerminal(created.id);
    const final = redactSnapshot(JSON.parse(answerWith(h.primary!.answers, KEY).content)).content as { answer: string };
    expect(done.outputHash).toBe(hashCanonical(final));
    const previews = recorder.of(created.id)[0]!.previews;
    expect(previews.length).toBeGreaterThan(3);
    expect(recorder.text(created.id, 1, 'answer')).toBe(final.answer);
    expect(JSON.stringify(previews)).not.toContain(KEY.slice(0, 8));
    expect(JSON.stringify(previews)).not.toContain('abcdefgh');
  });
});

describe('the first-token deadline', () => {
  it('gives up on a provider that sends no token in time and falls back to the next route', async () => {
    h.primary!.setScenario('hang');
    const created = await h.create({ jobType: 'first_token_job', input: { prompt: 'first token please' } });
    expect(await h.runUntilTerminal(created.id)).toMatchObject({ lifecycleStatus: 'succeeded', modelProvider: 'mock' });
    expect((await ledger(created.id)).map((u) => [u.provider, u.errorCode])).toEqual([['openai-compat', 'PROVIDER_TIMEOUT'], ['mock', null]]);
  });

  it('fails the attempt with PROVIDER_TIMEOUT when headers come but no token does, on every route', async () => {
    const disconnects = h.primary!.disconnects + h.mock.disconnects;
    const created = await h.create({ jobType: 'first_token_job', input: { prompt: 'headers only [first_token:10000]' } });
    const done = await h.runUntilTerminal(created.id);
    expect(done).toMatchObject({ lifecycleStatus: 'failed', errorCode: 'PROVIDER_TIMEOUT', attemptCount: 1 });
    expect(done.internalErrorMessage).toContain('mock sent no token within 1000 ms');
    expect((await ledger(created.id)).map((u) => u.errorCode)).toEqual(['PROVIDER_TIMEOUT', 'PROVIDER_TIMEOUT']);
    await waitFor(async () => h.primary!.disconnects + h.mock.disconnects >= disconnects + 2, 'both providers to see the hang-up', 5_000);
  });
});

describe('a stream that breaks off', () => {
  it('429 mid-stream before anything was shown: falls back to the next route within the attempt', async () => {
    h.primary!.setScenario('rate_limit_mid:3');
    const created = await feynman('Rate limited entropy');
    expect(await h.runUntilTerminal(created.id)).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1, modelProvider: 'mock' });
    const answer = JSON.parse(answerWith(h.mock.answers, 'Rate limited entropy').content) as { feedback: string };
    expect(recorder.text(created.id, 1, 'feedback')).toBe(answer.feedback);
    expect((await ledger(created.id)).map((u) => [u.provider, u.errorCode, u.totalTokens > 0])).toEqual([
      ['openai-compat', 'PROVIDER_RATE_LIMITED', false],
      ['mock', null, true],
    ]);
  });

  it('cut mid-answer after previews were shown: the attempt fails PROVIDER_UNAVAILABLE (retryable, no fallback); the retry streams anew', async () => {
    h.primary!.setScenario('cut:25');
    const created = await feynman('Cut entropy');
    const first = await h.deliver();
    expect(first.response.batchItemFailures).toHaveLength(1);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'running', errorCode: 'PROVIDER_UNAVAILABLE', lockedBy: null });
    expect(h.mock.requests.some((r) => JSON.stringify(r.messages).includes('Cut entropy'))).toBe(false);
    const cut = recorder.of(created.id)[0]!;
    expect(cut).toMatchObject({ attempt: 1, closed: true, statusAtClose: 'running' });
    expect(cut.previews.length).toBeGreaterThan(0);

    h.primary!.setScenario(undefined);
    expect(await h.runUntilTerminal(created.id)).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 2 });
    const answer = JSON.parse(answerWith(h.primary!.answers, 'Cut entropy').content) as { feedback: string; gaps: string[] };
    expect(recorder.text(created.id, 2, 'feedback')).toBe(answer.feedback);
    expect(recorder.items(created.id, 2, 'gaps')).toEqual(answer.gaps.map((g, i) => [i, g]));
    expect(answer.feedback.startsWith(recorder.text(created.id, 1, 'feedback'))).toBe(true);
    expect((await ledger(created.id)).map((u) => [u.attemptNo, u.errorCode, u.totalTokens])).toEqual([
      [1, 'PROVIDER_UNAVAILABLE', 0],
      [2, null, expect.any(Number)],
    ]);
  });
});

describe('an engine without a stream log', () => {
  it('shows nothing, so a cut after the answer began still falls back within the attempt', async () => {
    h.primary!.setScenario('cut:25');
    const created = await feynman('Unwatched entropy');
    const message = { jobId: created.id, jobType: created.jobType, idempotencyKey: `ai.job.enqueue:${created.id}`, createdAt: created.createdAt.toISOString() };
    expect(await runJob(message, { ...h.engine, openAttemptStream: undefined })).toEqual({ kind: 'succeeded', jobId: created.id });
    expect((await ledger(created.id)).map((u) => [u.provider, u.errorCode])).toEqual([['openai-compat', 'PROVIDER_UNAVAILABLE'], ['mock', null]]);
    expect(recorder.of(created.id)).toEqual([]);
  });
});

describe('cancel mid-stream', () => {
  it('stops the provider call while it streams, closes the segment and ends the job cancelled', async () => {
    const disconnects = h.primary!.disconnects;
    const created = await feynman('Cancelled entropy', 'Slowly written [tps:10]');
    const delivery = h.deliver();
    await waitFor(async () => (recorder.of(created.id)[0]?.previews.length ?? 0) > 0, 'the first preview', 10_000);
    expect((await requestCancel(db, created.id, { actor: 'api:user-1', ownerId: 'user-1' })).outcome).toBe('cancel_requested');
    expect((await delivery).response.batchItemFailures).toEqual([]);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'cancelled', errorCode: 'CANCELLED' });
    expect(h.primary!.disconnects).toBeGreaterThan(disconnects);
    expect(h.primary!.answers.some((a) => a.content.includes('Cancelled entropy'))).toBe(false);
    expect(recorder.of(created.id)).toEqual([expect.objectContaining({ closed: true, statusAtClose: 'running', afterClose: 0 })]);
    expect((await ledger(created.id)).map((u) => u.errorCode)).toEqual(['CANCELLED']);
  });
});

describe("the user's own DeepSeek key", () => {
  it('streams on the user key like on the platform key: previews add up to what the vendor sent', async () => {
    const userKey = 'sk-user0wnkey0123456789streaming';
    const kms = createKmsClient();
    const { KeyMetadata } = await kms.send(new CreateKeyCommand({ Description: 'streaming engine test' }));
    const own = await startEngineHarness({ realCredentials: true, deepseek: { apiKey: userKey }, engine: { openAttemptStream: recorder.open } });
    try {
      await storeUserKey(db, { userId: 'user-2', provider: 'deepseek', apiKey: userKey, kmsKeyId: KeyMetadata!.KeyId! }, { kms });
      const created = await own.create({
        userId: 'user-2', jobType: 'feynman_evaluation', credentialMode: 'user_deepseek_key',
        input: { concept: 'Own key entropy', explanation: 'Heat flows from hot to cold.' },
      });
      expect(await own.runUntilTerminal(created.id)).toMatchObject({ lifecycleStatus: 'succeeded', modelProvider: 'deepseek' });
      const sent = answerWith(own.deepseek!.answers, 'Own key entropy');
      expect(recorder.text(created.id, 1, 'feedback')).toBe((JSON.parse(sent.content) as { feedback: string }).feedback);
      expect(await db.aiUsageLog.findFirst({ where: { jobId: created.id } })).toMatchObject({
        provider: 'deepseek', credentialMode: 'user_deepseek_key', errorCode: null, totalTokens: sent.usage!.total_tokens,
      });
    } finally {
      await own.close();
    }
  });
});
