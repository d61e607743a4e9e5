/**
 * The mixed jobs of bench/memory.ts, per queue, as each consumer Lambda receives them: every job type of the
 * queue, seven in eight ordinary and one in eight at the schemas' limits (the longest input the API accepts and
 * the longest output the output schema accepts, streamed), so a batch's peak reflects a bad case, not the mean.
 *
 * - interactive: feynman_evaluation (streams `feedback` as text and `gaps` as items) and synthetic_job.
 * - background: quiz_generation (streams `questions`) and flashcard_generation (streams `cards`).
 *
 * The mock provider answers with {@link benchRespond}: the job type's own mock answer, and for a job whose input
 * says `bench-max`, the same answer with every string grown to its schema's maximum length (quiz: 20 questions
 * of 1,000 + 4 × 300 + 2,000 characters, ~84 KB; flashcards: 50 cards of 500 + 2,000, ~125 KB; Feynman: 20
 * gaps of 500 and 4,000 of feedback). An ordinary answer streams at the mock's pace; a `bench-max` one is
 * marked `[tps:1000]`, a fast model's pace (the mock's timer allows about that much), which keeps the run short.
 * Unpaced (`[tps:0]`, the whole answer in a few milliseconds) the consumer falls behind the socket, the
 * received chunks outlive young-generation collections and ~30 MB of garbage buffers wait for a full one:
 * a peak that a provider streaming at a model's pace does not cause.
 */
import { jobTypeMockResponder } from '../../lib/dev/mock-responder.ts';
import type { MockChatContext } from '../../lib/dev/mock-ai-server.ts';
import { lastUserText } from '../../lib/dev/mock-markers.ts';
import { MAX_FLASHCARDS } from '../../lib/job-types/flashcard-generation.ts';
import { MAX_QUIZ_QUESTIONS } from '../../lib/job-types/quiz-generation.ts';
import type { QueueName } from '../../lib/queue/queue-definitions.ts';

export interface BenchJob { jobType: string; input: unknown }

const MAX_MARK = 'bench-max [tps:1000]';
const SENTENCE = 'Cells turn glucose and oxygen into carbon dioxide, water and the energy they store as ATP.';

/** `n` characters of sentences (each different, so a mock answer built from sentences is not one line repeated). */
function text(n: number, label: string): string {
  const parts: string[] = [];
  for (let i = 0, length = 0; length < n; i += 1) {
    const s = `${label} ${i}: ${SENTENCE}`;
    parts.push(s);
    length += s.length + 1;
  }
  return parts.join(' ').slice(0, n).trim();
}

/** The i-th job of `queue`'s cycle of eight: seven ordinary, the last at the limits (alternating job types). */
export function benchJob(queue: QueueName, i: number): BenchJob {
  const slot = i % 8;
  const big = slot === 7;
  const kind = big ? Math.floor(i / 8) % 2 : slot % 2;
  const label = `job-${i}`;
  if (queue === 'interactive') {
    if (kind === 0) {
      return { jobType: 'feynman_evaluation', input: big
        ? { concept: `Respiration ${label}`, explanation: `${MAX_MARK} ${text(7_900, label)}` }
        : { concept: `Respiration ${label}`, explanation: text(600, label) } };
    }
    return { jobType: 'synthetic_job', input: { prompt: big ? `${MAX_MARK} ${text(3_900, label)}` : text(300, label) } };
  }
  if (kind === 0) {
    return { jobType: 'quiz_generation', input: big
      ? { sourceText: `${MAX_MARK} ${text(19_900, label)}`, count: MAX_QUIZ_QUESTIONS, difficulty: 'hard' }
      : { sourceText: text(2_000, label), count: 5, difficulty: 'medium' } };
  }
  return { jobType: 'flashcard_generation', input: big
    ? { sourceText: `${MAX_MARK} ${text(19_900, label)}`, maxCards: MAX_FLASHCARDS }
    : { sourceText: text(2_000, label), maxCards: 10 } };
}

/** `s` grown (or cut) to exactly `n` characters, its own text first. */
function grow(s: string, n: number): string {
  const filler = ` ${SENTENCE}`.repeat(Math.ceil(n / SENTENCE.length) + 1);
  return `${s}${filler}`.slice(0, n).trimEnd().padEnd(n, '.');
}

type Answer = Record<string, unknown>;

/** Every string of a job type's answer at its schema's maximum length. */
function atLimits(answer: Answer): Answer {
  if (Array.isArray(answer.questions)) {
    return { questions: (answer.questions as Answer[]).map((q) => ({
      ...q, question: grow(String(q.question), 1_000), options: (q.options as string[]).map((o) => grow(o, 300)),
      explanation: grow(String(q.explanation), 2_000),
    })) };
  }
  if (Array.isArray(answer.cards)) {
    return { cards: (answer.cards as Answer[]).map((c) => ({ front: grow(String(c.front), 500), back: grow(String(c.back), 2_000) })) };
  }
  if (typeof answer.feedback === 'string') {
    return { ...answer, feedback: grow(answer.feedback, 4_000), gaps: Array.from({ length: 20 }, (_, k) => grow(`Gap ${k + 1}.`, 500)) };
  }
  return { ...answer, answer: grow(String(answer.answer), 4_000) };
}

/** The mock provider's answer: the type's mock answer, at the schema's limits for a `bench-max` job. */
export function benchRespond(ctx: MockChatContext): object {
  const answer = jobTypeMockResponder(ctx) as Answer;
  return lastUserText(ctx.messages).includes('bench-max') ? atLimits(answer) : answer;
}
