/**
 * The job the peers bench runs on every system, chosen by BENCH_WORKLOAD:
 * - `quiz` (default): quiz_generation with `count: 2` — the README's first example and what a new user tries
 *   first. Ours projects two QuizQuestion rows (and their artifact rows) in the job's finishing transaction.
 * - `feynman`: feynman_evaluation, one FeynmanEvaluation row (the workload of the figures before quiz).
 *
 * Each workload is a registration: our HTTP collection and input, and what a peer's handler does with the same
 * mock provider — the same prompt, the same output schema, and result rows of the same shape as our projection
 * writes (same columns and the same secondary index on user and time), in one INSERT.
 */
import type * as z from 'zod';
import type { PromptTemplate } from '../../lib/ai/prompts/prompt-template.ts';
import { maxAttemptsOf } from '../../lib/jobs/definition.ts';
import { feynmanEvaluationJob, feynmanEvaluationOutputSchema, feynmanEvaluationPrompt, type FeynmanEvaluationInput } from '../../lib/job-types/feynman-evaluation.ts';
import { quizGenerationJob, quizGenerationOutputSchema, quizGenerationPrompt, type QuizGenerationInput } from '../../lib/job-types/quiz-generation.ts';

/** An INSERT and its values (PostgreSQL placeholders). */
export interface PeerStatement { sql: string; values: unknown[] }

/** A job our API takes: its type, its HTTP collection (lib/api/routes.ts) and the input of job i of a run. */
export interface OursJob<I = unknown> {
  name: string;
  jobType: string;
  path: string;
  input(runId: string, i: number): I;
}

/** A job for ours and the peers alike. */
export interface BenchWorkload<I = unknown, O = unknown> extends OursJob<I> {
  /** Attempts our definition allows; the peers get as many. */
  maxAttempts: number;
  prompt: PromptTemplate<I>;
  /** Our definition's input schema: what an API in front of a peer validates a request's body with (./http-front.ts). */
  inputSchema: z.ZodType<I>;
  outputSchema: z.ZodType<O>;
  /** The peers' result table (PostgreSQL), shaped as our projection's rows, and its name. */
  resultTableSql: string;
  resultTable: string;
  /** The result rows of one job as one statement; idempotent on the job key (a retry writes no second set). */
  resultInsert(o: { system: string; key: string; userId: string; input: I; output: O }): PeerStatement;
  /** The checks our projector makes beyond the schema (e.g. the question count); throws when they fail. */
  check(input: I, output: O): void;
}

const quiz: BenchWorkload<QuizGenerationInput, z.output<typeof quizGenerationOutputSchema>> = {
  name: 'quiz',
  jobType: 'quiz_generation',
  path: '/api/ai/quiz-generations',
  maxAttempts: maxAttemptsOf(quizGenerationJob),
  input: (runId, i) => ({ sourceText: `Source ${runId}-${i}: Mitochondria make ATP. Energy is conserved.`, count: 2, difficulty: 'easy' }),
  prompt: quizGenerationPrompt,
  inputSchema: quizGenerationJob.inputSchema,
  outputSchema: quizGenerationOutputSchema,
  resultTable: 'peer_quiz_question',
  resultTableSql: `
    CREATE TABLE IF NOT EXISTS peer_quiz_question (id BIGSERIAL PRIMARY KEY, system TEXT NOT NULL, job_key TEXT NOT NULL,
      user_id TEXT NOT NULL, ordinal INT NOT NULL, question TEXT NOT NULL, options JSONB NOT NULL, answer_index INT NOT NULL,
      explanation TEXT NOT NULL, difficulty TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), UNIQUE (job_key, ordinal));
    CREATE INDEX IF NOT EXISTS peer_quiz_question_user ON peer_quiz_question (user_id, created_at)`,
  resultInsert({ system, key, userId, input, output }) {
    const values: unknown[] = [];
    const tuples = output.questions.map((q, ordinal) => {
      const at = values.push(system, key, userId, ordinal, q.question, JSON.stringify(q.options), q.answerIndex, q.explanation, input.difficulty) - 9;
      return `(${Array.from({ length: 9 }, (_, k) => `$${at + k + 1}`).join(', ')})`;
    });
    return {
      sql: `INSERT INTO peer_quiz_question (system, job_key, user_id, ordinal, question, options, answer_index, explanation, difficulty)
            VALUES ${tuples.join(', ')} ON CONFLICT (job_key, ordinal) DO NOTHING`,
      values,
    };
  },
  check(input, output) {
    if (output.questions.length !== input.count) throw new Error(`${output.questions.length} questions, ${input.count} requested`);
    for (const q of output.questions) if (q.answerIndex < 0 || q.answerIndex >= q.options.length) throw new Error(`answerIndex ${q.answerIndex} out of range`);
  },
};

const feynman: BenchWorkload<FeynmanEvaluationInput, z.output<typeof feynmanEvaluationOutputSchema>> = {
  name: 'feynman',
  jobType: 'feynman_evaluation',
  path: '/api/ai/feynman-evaluations',
  maxAttempts: maxAttemptsOf(feynmanEvaluationJob),
  input: (runId, i) => ({ concept: `Concept ${runId}-${i}`, explanation: `Explanation ${i}: energy is conserved.` }),
  prompt: feynmanEvaluationPrompt,
  inputSchema: feynmanEvaluationJob.inputSchema,
  outputSchema: feynmanEvaluationOutputSchema,
  resultTable: 'peer_feynman_evaluation',
  resultTableSql: `
    CREATE TABLE IF NOT EXISTS peer_feynman_evaluation (id BIGSERIAL PRIMARY KEY, system TEXT NOT NULL, job_key TEXT NOT NULL UNIQUE,
      user_id TEXT NOT NULL, concept TEXT NOT NULL, score INT NOT NULL, gaps JSONB NOT NULL, feedback TEXT NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now());
    CREATE INDEX IF NOT EXISTS peer_feynman_evaluation_user ON peer_feynman_evaluation (user_id, created_at)`,
  resultInsert: ({ system, key, userId, input, output }) => ({
    sql: `INSERT INTO peer_feynman_evaluation (system, job_key, user_id, concept, score, gaps, feedback)
          VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (job_key) DO NOTHING`,
    values: [system, key, userId, input.concept, output.score, JSON.stringify(output.gaps), output.feedback],
  }),
  check: () => undefined,
};

/** flashcard_generation (up to 3 cards), for mixed workloads of ours alone (bench/capacity.ts). */
export const FLASHCARDS_JOB: OursJob = {
  name: 'flashcards',
  jobType: 'flashcard_generation',
  path: '/api/ai/flashcard-generations',
  input: (runId, i) => ({ sourceText: `Source ${runId}-${i}: Mitochondria make ATP. Energy is conserved. Cells divide.`, maxCards: 3 }),
};

export const BENCH_WORKLOADS: readonly BenchWorkload[] = [quiz as BenchWorkload, feynman as BenchWorkload];

/** The workload BENCH_WORKLOAD names (default `quiz`). */
export function workloadFromEnv(env: NodeJS.ProcessEnv = process.env): BenchWorkload {
  const name = env.BENCH_WORKLOAD?.trim() || 'quiz';
  const found = BENCH_WORKLOADS.find((w) => w.name === name);
  if (!found) throw new Error(`BENCH_WORKLOAD=${JSON.stringify(name)}: expected one of ${BENCH_WORKLOADS.map((w) => w.name).join(', ')}`);
  return found;
}

/** User ids of the bench: `bench-<group>-<u>`; a group per run gives every job of that run a user of its own. */
export const benchUserId = (group: string, u: number): string => `bench-${group}-${u}`;
