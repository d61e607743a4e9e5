/**
 * What each job type produced, as the result routes return it: one reader per job type, in a table keyed by
 * `jobType` (a registration, never a branch). A reader reads the business rows the type's projector wrote
 * for one job — never the model's raw or validated output, which the engine does not keep.
 */
import * as z from 'zod';
import type { AiJob, Db } from '../db/client.ts';
import { responseSchemas } from './response-schemas.ts';

export interface JobResultReader {
  /** Documents the response (OpenAPI); tests parse real responses with it. */
  schema: z.ZodType;
  read(db: Db, job: AiJob): Promise<unknown>;
}

const feynmanEvaluationResultSchema = z
  .strictObject({
    jobId: z.string(),
    evaluation: z.strictObject({
      id: z.string(),
      concept: z.string(),
      score: z.number().int().min(0).max(100),
      gaps: z.array(z.string()),
      feedback: z.string(),
      createdAt: z.iso.datetime(),
    }),
  })
  .register(responseSchemas, { id: 'FeynmanEvaluationResult' });

const quizGenerationResultSchema = z
  .strictObject({
    jobId: z.string(),
    questions: z.array(
      z.strictObject({
        id: z.string(),
        ordinal: z.number().int(),
        question: z.string(),
        options: z.array(z.string()),
        answerIndex: z.number().int(),
        explanation: z.string(),
        difficulty: z.string(),
      }),
    ),
  })
  .register(responseSchemas, { id: 'QuizGenerationResult' });

const flashcardGenerationResultSchema = z
  .strictObject({
    jobId: z.string(),
    flashcards: z.array(z.strictObject({ id: z.string(), ordinal: z.number().int(), front: z.string(), back: z.string() })),
  })
  .register(responseSchemas, { id: 'FlashcardGenerationResult' });

/** JSON columns hold arrays of strings (written by the projectors); anything else reads as empty. */
function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The result readers, by job type. */
export const JOB_RESULT_READERS: ReadonlyMap<string, JobResultReader> = new Map<string, JobResultReader>([
  ['feynman_evaluation', {
    schema: feynmanEvaluationResultSchema,
    read: async (db, job) => {
      const row = await db.feynmanEvaluation.findUniqueOrThrow({ where: { jobId: job.id } });
      return {
        jobId: job.id,
        evaluation: {
          id: row.id, concept: row.concept, score: row.score, gaps: stringArray(row.gaps),
          feedback: row.feedback, createdAt: row.createdAt.toISOString(),
        },
      };
    },
  }],
  ['quiz_generation', {
    schema: quizGenerationResultSchema,
    read: async (db, job) => {
      const rows = await db.quizQuestion.findMany({ where: { jobId: job.id }, orderBy: { ordinal: 'asc' } });
      return {
        jobId: job.id,
        questions: rows.map((q) => ({
          id: q.id, ordinal: q.ordinal, question: q.question, options: stringArray(q.options),
          answerIndex: q.answerIndex, explanation: q.explanation, difficulty: q.difficulty,
        })),
      };
    },
  }],
  ['flashcard_generation', {
    schema: flashcardGenerationResultSchema,
    read: async (db, job) => {
      const rows = await db.flashcard.findMany({ where: { jobId: job.id }, orderBy: { ordinal: 'asc' } });
      return { jobId: job.id, flashcards: rows.map((c) => ({ id: c.id, ordinal: c.ordinal, front: c.front, back: c.back })) };
    },
  }],
]);
