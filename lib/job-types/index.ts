/**
 * The catalogue of job types: one module per type, each exporting a definition and registering nothing
 * itself. To add a type, write its module and list it here; nothing else in the engine changes.
 */
import type { JobDefinitionSpec } from '../jobs/definition.ts';
import type { JobDefinitionRegistry } from '../jobs/registry.ts';
import { syntheticJob } from './synthetic-job.ts';

/** Every job type the engine runs. */
export const jobDefinitions: readonly JobDefinitionSpec[] = [syntheticJob];

/** Registers every job type in {@link jobDefinitions}; `lib/jobs/registry.ts` calls it for `jobRegistry`. */
export function registerJobTypes(registry: JobDefinitionRegistry): void {
  for (const def of jobDefinitions) registry.register(def);
}
