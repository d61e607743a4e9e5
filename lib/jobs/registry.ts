/**
 * The job definition registry (ADR-003 §2.2): the one place that maps a `jobType` to its definition, so
 * nothing else ever branches on `jobType`. Definitions are validated when registered, which happens at
 * module load, so a bad definition stops the process before it takes any work.
 */
import { registerJobTypes } from '../job-types/index.ts';
import { registrableJobDefinitionSchema, type JobDefinition, type JobDefinitionSpec } from './definition.ts';
import { DuplicateJobDefinitionError, InvalidJobDefinitionError, UnknownJobTypeError, toIssueDetails } from './errors.ts';

/** Holds validated, frozen job definitions keyed by `jobType`. */
export class JobDefinitionRegistry {
  readonly #definitions = new Map<string, JobDefinition>();

  /**
   * Validates `spec`, applies defaults and stores a frozen copy.
   * @returns the registered definition
   * @throws InvalidJobDefinitionError listing every offending field
   * @throws DuplicateJobDefinitionError when the job type is already registered
   */
  register<I, O>(spec: JobDefinitionSpec<I, O>): JobDefinition<I, O> {
    const parsed = registrableJobDefinitionSchema.safeParse(spec);
    if (!parsed.success) {
      const jobType = typeof spec?.jobType === 'string' ? spec.jobType : '(missing jobType)';
      throw new InvalidJobDefinitionError(jobType, toIssueDetails(parsed.error));
    }
    const def = parsed.data;
    if (this.#definitions.has(def.jobType)) throw new DuplicateJobDefinitionError(def.jobType);
    const frozen = freezeMetadata({ ...def, inputSchema: spec.inputSchema, outputSchema: spec.outputSchema });
    this.#definitions.set(def.jobType, frozen);
    return frozen;
  }

  /**
   * The definition of `jobType`.
   * @throws UnknownJobTypeError when none is registered
   */
  get(jobType: string): JobDefinition {
    const def = this.#definitions.get(jobType);
    if (!def) throw new UnknownJobTypeError(jobType);
    return def;
  }

  /** Whether `jobType` is registered; for callers that must not throw (e.g. a consumer failing a stale job). */
  has(jobType: string): boolean {
    return this.#definitions.has(jobType);
  }

  /** Every definition, in registration order. */
  getAll(): JobDefinition[] {
    return [...this.#definitions.values()];
  }
}

/** A registry holding exactly `specs` (for tests and tools); throws as {@link JobDefinitionRegistry.register}. */
export function createRegistry(specs: Iterable<JobDefinitionSpec>): JobDefinitionRegistry {
  const registry = new JobDefinitionRegistry();
  for (const spec of specs) registry.register(spec);
  return registry;
}

/** The process-wide registry: every job type in `lib/job-types/`. */
export const jobRegistry: JobDefinitionRegistry = new JobDefinitionRegistry();
registerJobTypes(jobRegistry);

/**
 * Freezes the definition and its nested data objects. The zod schemas are left alone: zod caches lazily
 * on them and would break if frozen.
 */
function freezeMetadata<T extends JobDefinition>(def: T): T {
  for (const [key, value] of Object.entries(def)) {
    if (key !== 'inputSchema' && key !== 'outputSchema' && typeof value === 'object' && value !== null) {
      deepFreeze(value);
    }
  }
  return Object.freeze(def);
}

function deepFreeze(value: object): void {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null) deepFreeze(child);
  }
  Object.freeze(value);
}
