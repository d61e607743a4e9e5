/**
 * The result projector registry (ADR-003 §6): maps `JobDefinition.projector` keys to {@link ResultProjector}s so the
 * engine finds a job's projector without branching on `jobType`. `lib/job-types/index.ts` fills the process-wide
 * {@link projectorRegistry} when it loads, after checking that every definition's projector key resolves.
 * This module imports no job type, so it never forms an import cycle with the catalogue.
 */
import { EngineError } from '../errors.ts';
import type { ResultProjector } from './projector.ts';

/** No projector is registered under this key: a definition names a projector nobody wrote. */
export class UnknownProjectorError extends EngineError {
  readonly code = 'UNKNOWN_PROJECTOR';
  constructor(readonly key: string) {
    super(`No result projector is registered under "${key}"`);
  }
}

/** Two projectors claim the same key; raised at registration, so at process start. */
export class DuplicateProjectorError extends EngineError {
  readonly code = 'DUPLICATE_PROJECTOR';
  constructor(readonly key: string) {
    super(`A result projector is already registered under "${key}"`);
  }
}

/** Holds result projectors keyed by {@link ResultProjector.key}. A key maps to exactly one projector. */
export class ProjectorRegistry {
  readonly #projectors = new Map<string, ResultProjector>();

  /**
   * Stores `projector` under its key.
   * @throws DuplicateProjectorError when the key is taken, even by the same projector (callers that may repeat
   *   a registration check {@link has} and {@link get} first)
   */
  register(projector: ResultProjector): void {
    if (this.#projectors.has(projector.key)) throw new DuplicateProjectorError(projector.key);
    this.#projectors.set(projector.key, projector);
  }

  /**
   * The projector registered under `key`.
   * @throws UnknownProjectorError when there is none
   */
  get(key: string): ResultProjector {
    const projector = this.#projectors.get(key);
    if (!projector) throw new UnknownProjectorError(key);
    return projector;
  }

  /** Whether a projector is registered under `key`. */
  has(key: string): boolean {
    return this.#projectors.has(key);
  }

  /** Every registered key, in registration order. */
  keys(): string[] {
    return [...this.#projectors.keys()];
  }
}

/** The process-wide registry, filled when `lib/job-types/index.ts` loads. */
export const projectorRegistry: ProjectorRegistry = new ProjectorRegistry();
