/**
 * What one job type module in `lib/job-types/` contributes. `lib/job-types/index.ts` lists the modules and
 * registers each part in its registry in a loop, so adding a job type is writing one of these and listing it.
 */
import type { PromptTemplate } from '../ai/prompts/prompt-template.ts';
import type { JobDefinitionSpec } from '../jobs/definition.ts';
import type { ResultProjector } from '../jobs/projector.ts';

/** A job type: its definition, prompt, projector and the local mock provider's answer for it. */
export interface JobTypeModule<I = unknown, O = unknown> {
  /** Registered in the job definition registry; names the prompt and projector below by key. */
  readonly definition: JobDefinitionSpec<I, O>;
  /** Registered in the prompt registry; its key and version match `definition.prompt`. */
  readonly prompt: PromptTemplate<I>;
  /** Registered in the projector registry; its key matches `definition.projector`. Absent for side-effect-free types. */
  readonly projector?: ResultProjector<O>;
  /**
   * A valid output (one that parses with `definition.outputSchema`) for a rendered user message, derived from it
   * deterministically. The local mock provider answers with it (lib/dev/mock-responder.ts).
   */
  mockResponse(userMessage: string): object;
}
