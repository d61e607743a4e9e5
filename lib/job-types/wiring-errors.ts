/** Typed failures of wiring job types to their prompts and projectors at startup (lib/job-types/index.ts). */
import { EngineError } from '../errors.ts';

/** One unresolved reference: a definition names a prompt or projector that nobody registered. */
export interface JobTypeWiringProblem {
  jobType: string;
  kind: 'prompt' | 'projector';
  /** The projector key, or the prompt as `key@version`. */
  ref: string;
}

/**
 * Some definitions name prompts or projectors that are not registered. Raised by `registerJobTypes` before it
 * registers anything, so the process stops at startup instead of failing the first job of that type.
 * `problems` lists every unresolved reference at once.
 */
export class JobTypeWiringError extends EngineError {
  readonly code = 'JOB_TYPE_WIRING';
  constructor(readonly problems: readonly JobTypeWiringProblem[]) {
    super(`Job types reference unregistered parts: ${problems.map((p) => `"${p.jobType}" names ${p.kind} "${p.ref}"`).join('; ')}`);
  }
}

