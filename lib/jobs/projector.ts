/**
 * Result projectors (ADR-003 §6): turn a validated output into business rows inside the engine's projection
 * transaction. The engine then writes one AiJobArtifact per returned reference, marks the job succeeded
 * (fenced by its lease) and adds the `ai.job.succeeded` outbox row — all in that same transaction, so a
 * projector failure rolls everything back.
 */
import type { AiJob, Prisma } from '../db/client.ts';
import type { SqlValue } from '../db/sql.ts';

export interface ArtifactRef {
  /** The business table, e.g. `QuizQuestion`. */
  artifactType: string;
  /** The business row's id. */
  artifactId: string;
  ordinal: number;
}

/** What the engine knows besides the output: the input the attempt ran on (parsed from its snapshot). */
export interface ProjectionContext {
  input: unknown;
}

/** One business row to insert: its table and its column values, ready for SQL (JSON columns as JSON text). */
export interface ProjectedRow {
  table: string;
  values: Record<string, SqlValue>;
}

/** A projection said as rows to insert, and the artifact references to them. */
export interface RowProjection {
  rows: ProjectedRow[];
  refs: ArtifactRef[];
}

export interface ResultProjector<O = unknown> {
  /** Matches `JobDefinition.projector`. */
  readonly key: string;
  /**
   * Writes business rows for `output` and returns references to them. Must use only `tx`.
   * Throw BusinessValidationError / ReferenceValidationError (lib/jobs/failures.ts) for outputs that are
   * well-formed but unacceptable; they are not retried.
   */
  project(tx: Prisma.TransactionClient, job: AiJob, output: O, context?: ProjectionContext): Promise<ArtifactRef[]>;
  /**
   * Optional: the same projection as rows to insert, decided without the database (same checks, same
   * BusinessValidationError). When present the engine writes them in the projection's one round trip on the
   * raw pool (lib/engine/project.ts) instead of calling {@link project} in a Prisma transaction.
   */
  rows?(job: AiJob, output: O, context: ProjectionContext): RowProjection;
}
