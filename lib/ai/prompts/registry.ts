/**
 * Prompt templates by `key@version`. A job stores the key and version it was created with, so the engine
 * always renders the prompt the job was created under, even after a newer version ships. Versions are
 * immutable: registering the same `key@version` twice is an error, never an overwrite.
 */
import { EngineError } from '../../errors.ts';
import { promptTemplates } from './index.ts';
import type { PromptTemplate } from './prompt-template.ts';

/** No template is registered under `key@version`: a job from a newer deployment, or a prompt removed too early. */
export class UnknownPromptError extends EngineError {
  readonly code = 'UNKNOWN_PROMPT';
  constructor(readonly key: string, readonly version: string) {
    super(`Unknown prompt "${key}@${version}"`);
  }
}

/** Two templates claim the same `key@version`; raised at registration, so at process start. */
export class DuplicatePromptError extends EngineError {
  readonly code = 'DUPLICATE_PROMPT';
  constructor(readonly key: string, readonly version: string) {
    super(`Prompt "${key}@${version}" is already registered`);
  }
}

/** A set of prompt templates, looked up by key and version. */
export class PromptRegistry {
  readonly #templates = new Map<string, PromptTemplate>();

  /** @throws DuplicatePromptError */
  register(template: PromptTemplate): void {
    const id = promptId(template.key, template.version);
    if (this.#templates.has(id)) throw new DuplicatePromptError(template.key, template.version);
    this.#templates.set(id, Object.freeze({ ...template }));
  }

  /** @throws UnknownPromptError */
  get(key: string, version: string): PromptTemplate {
    const template = this.#templates.get(promptId(key, version));
    if (!template) throw new UnknownPromptError(key, version);
    return template;
  }

  has(key: string, version: string): boolean {
    return this.#templates.has(promptId(key, version));
  }
}

/** `key@version`, the id a template is stored under. */
export function promptId(key: string, version: string): string {
  return `${key}@${version}`;
}

/** The process-wide registry, holding every template in `lib/ai/prompts/index.ts`. */
export const promptRegistry = new PromptRegistry();
for (const template of promptTemplates) promptRegistry.register(template);

/** Registers a template in {@link promptRegistry}. @throws DuplicatePromptError */
export function registerPrompt(template: PromptTemplate): void {
  promptRegistry.register(template);
}

/** The template `key@version` from {@link promptRegistry}. @throws UnknownPromptError */
export function getPrompt(key: string, version: string): PromptTemplate {
  return promptRegistry.get(key, version);
}
