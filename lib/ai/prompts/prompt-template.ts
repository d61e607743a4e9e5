/**
 * A prompt template: a job type's system prompt and how its input becomes the user message, pinned by key and
 * version (stored on the job as `promptKey`/`promptVersion`, so a job always runs the prompt it was created with).
 */
export interface PromptTemplate<I = unknown> {
  key: string;
  version: string;
  /** Must ask for a JSON object and describe its fields (the output is validated by the definition's schema). */
  system: string;
  /** The user message for one job input (already validated). */
  render(input: I): string;
}
