/**
 * The catalogue of prompt templates: one module per prompt (or per job type), listed here. The registry
 * (`registry.ts`) loads this list at startup; adding a prompt means writing its module and listing it.
 * Keep old versions listed while jobs created with them may still run.
 */
import type { PromptTemplate } from './prompt-template.ts';
import { syntheticPromptV1 } from './synthetic.ts';

/** Every built-in prompt template, any order. */
export const promptTemplates: readonly PromptTemplate[] = [syntheticPromptV1];
