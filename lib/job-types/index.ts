/**
 * The catalogue of job types: one module per type, each exporting a {@link JobTypeModule} (definition, prompt,
 * projector, mock response) and registering nothing itself. To add a type, write its module and list it in
 * {@link jobTypeModules}; nothing else in the engine changes.
 *
 * Registration, in loops, never per type:
 * - when this module loads, every prompt and projector goes into the process-wide prompt and projector
 *   registries ({@link registerJobTypeParts}), so they are complete for anything that imports the catalogue;
 * - `lib/jobs/registry.ts` then calls {@link registerJobTypes} for the process-wide definition registry.
 * Both first check that every definition's prompt and projector resolve, so a broken catalogue stops the process
 * at startup with a JobTypeWiringError.
 *
 * Import graph: this module imports the prompt and projector registries, never `lib/jobs/registry.ts` (type
 * only), so the definition registry can import it without a cycle.
 */
import { promptId, promptRegistry, type PromptRegistry } from '../ai/prompts/registry.ts';
import type { PromptTemplate } from '../ai/prompts/prompt-template.ts';
import type { JobDefinitionSpec } from '../jobs/definition.ts';
import { projectorRegistry, type ProjectorRegistry } from '../jobs/projector-registry.ts';
import type { ResultProjector } from '../jobs/projector.ts';
import type { JobDefinitionRegistry } from '../jobs/registry.ts';
import { feynmanEvaluationModule } from './feynman-evaluation.ts';
import { flashcardGenerationModule } from './flashcard-generation.ts';
import type { JobTypeModule } from './job-type-module.ts';
import { quizGenerationModule } from './quiz-generation.ts';
import { syntheticJobModule } from './synthetic-job.ts';
import { JobTypeWiringError, type JobTypeWiringProblem } from './wiring-errors.ts';

export type { JobTypeModule } from './job-type-module.ts';
export { JobTypeWiringError, type JobTypeWiringProblem } from './wiring-errors.ts';

/** Every job type the engine runs, in registration order. */
export const jobTypeModules: readonly JobTypeModule[] = [
  syntheticJobModule,
  feynmanEvaluationModule,
  quizGenerationModule,
  flashcardGenerationModule,
];

/** Every job type's definition, in the order of {@link jobTypeModules}. */
export const jobDefinitions: readonly JobDefinitionSpec[] = jobTypeModules.map((m) => m.definition);

/** Where registration goes; each registry defaults to the process-wide one. */
export interface JobTypeRegistrationOptions {
  modules?: readonly JobTypeModule[];
  prompts?: PromptRegistry;
  projectors?: ProjectorRegistry;
}

/**
 * Registers each module's definition, then its prompt and projector (as {@link registerJobTypeParts}), after
 * checking that every definition's prompt `key@version` and projector key resolve (to a module of this batch or
 * to an entry already registered).
 * Invariant: after it returns, every registered definition's prompt and projector can be looked up.
 * @throws JobTypeWiringError listing every unresolved reference; nothing is registered then
 * @throws InvalidJobDefinitionError, DuplicateJobDefinitionError, DuplicatePromptError, DuplicateProjectorError
 *   from the registries
 */
export function registerJobTypes(definitions: JobDefinitionRegistry, options: JobTypeRegistrationOptions = {}): void {
  const { modules = jobTypeModules, prompts = promptRegistry, projectors = projectorRegistry } = options;
  assertWired(modules, prompts, projectors);
  for (const module of modules) definitions.register(module.definition);
  registerJobTypeParts({ modules, prompts, projectors });
}

/**
 * Registers each module's prompt and projector after the same check as {@link registerJobTypes}. A part already
 * registered as this very object (or, for a prompt, the same template listed by the prompt catalogue in
 * lib/ai/prompts/, such as `synthetic@v1`) is skipped, so running it again is harmless; a different part under a
 * taken key still fails.
 * @throws JobTypeWiringError; DuplicatePromptError or DuplicateProjectorError for a conflicting part
 */
export function registerJobTypeParts(options: JobTypeRegistrationOptions = {}): void {
  const { modules = jobTypeModules, prompts = promptRegistry, projectors = projectorRegistry } = options;
  assertWired(modules, prompts, projectors);
  for (const module of modules) registerPromptOnce(prompts, module.prompt);
  for (const module of modules) if (module.projector) registerProjectorOnce(projectors, module.projector);
}

/** The references of `modules`' definitions that neither the batch nor the registries can resolve. */
export function findWiringProblems(
  modules: readonly JobTypeModule[],
  prompts: Pick<PromptRegistry, 'has'>,
  projectors: Pick<ProjectorRegistry, 'has'>,
): JobTypeWiringProblem[] {
  const batchPrompts = new Set(modules.map((m) => promptId(m.prompt.key, m.prompt.version)));
  const batchProjectors = new Set(modules.flatMap((m) => (m.projector ? [m.projector.key] : [])));
  const problems: JobTypeWiringProblem[] = [];
  for (const { definition: def } of modules) {
    const prompt = promptId(def.prompt.key, def.prompt.version);
    if (!batchPrompts.has(prompt) && !prompts.has(def.prompt.key, def.prompt.version)) {
      problems.push({ jobType: def.jobType, kind: 'prompt', ref: prompt });
    }
    if (def.projector !== undefined && !batchProjectors.has(def.projector) && !projectors.has(def.projector)) {
      problems.push({ jobType: def.jobType, kind: 'projector', ref: def.projector });
    }
  }
  return problems;
}

/** @throws JobTypeWiringError when {@link findWiringProblems} finds any */
function assertWired(modules: readonly JobTypeModule[], prompts: PromptRegistry, projectors: ProjectorRegistry): void {
  const problems = findWiringProblems(modules, prompts, projectors);
  if (problems.length > 0) throw new JobTypeWiringError(problems);
}

/** Registers `template` unless the same template (same text and render function) holds its `key@version`. */
function registerPromptOnce(prompts: PromptRegistry, template: PromptTemplate<any>): void {
  if (prompts.has(template.key, template.version)) {
    const existing = prompts.get(template.key, template.version);
    if (existing.system === template.system && existing.render === template.render) return;
  }
  prompts.register(template);
}

/** Registers `projector` unless this very projector holds its key. */
function registerProjectorOnce(projectors: ProjectorRegistry, projector: ResultProjector<any>): void {
  if (projectors.has(projector.key) && projectors.get(projector.key) === projector) return;
  projectors.register(projector);
}

// Process-wide prompts and projectors, as soon as the catalogue loads (see the module comment).
registerJobTypeParts();
