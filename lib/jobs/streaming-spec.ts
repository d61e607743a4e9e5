/**
 * What a job type previews while the model writes its output: the definition's `streaming` field
 * (lib/jobs/definition.ts; docs/streaming.md, "Model output"). Absent, the type streams nothing.
 *
 * It names top-level fields of the output object, each one of two kinds:
 * - `text`: a string field that grows as it is written (Feynman `feedback`); watchers get its text in deltas.
 * - `items`: an array field whose elements appear one by one (quiz `questions`, flashcard `cards`); a watcher
 *   gets each element once it is complete and passes the element's own schema (taken from the output schema),
 *   so a preview item has the shape a client renders, never half an object.
 *
 * The spec is data; {@link resolveStreamingPlan} checks it against the output schema at registration (a
 * misspelt field, or a text field that is not a string, fails registration like any other definition error) and
 * gives the engine's reader (lib/stream/preview-reader.ts) the element schemas.
 */
import * as z from 'zod';

/** Most fields one type may stream. */
export const MAX_STREAMED_FIELDS = 8;

/** A top-level JSON key of the output object. */
const fieldName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a top-level field name of the output');

export const streamingSpecSchema = z
  .strictObject({
    /** String fields whose text is previewed as it grows. */
    text: z.array(fieldName).max(MAX_STREAMED_FIELDS).default([]),
    /** Array fields whose elements are previewed one by one, each once complete. */
    items: z.array(fieldName).max(MAX_STREAMED_FIELDS).default([]),
  })
  .refine((s) => s.text.length + s.items.length > 0, { message: 'names no field: leave `streaming` out instead' })
  .refine((s) => new Set([...s.text, ...s.items]).size === s.text.length + s.items.length, { message: 'names a field twice' });

export type StreamingSpec = z.output<typeof streamingSpecSchema>;

/** A spec resolved against the output schema: what the preview reader needs. */
export interface StreamingPlan {
  text: readonly string[];
  items: readonly { field: string; element: z.ZodType }[];
}

/**
 * Resolves `spec` against `outputSchema`: every `text` field must be a string, every `items` field an array, in
 * the output object's shape (optional, nullable or defaulted fields included).
 * @returns the plan, or the problems (one message per bad field) when there is none
 */
export function resolveStreamingPlan(spec: StreamingSpec, outputSchema: z.ZodType): { plan: StreamingPlan } | { problems: string[] } {
  if (!(outputSchema instanceof z.ZodObject)) return { problems: ['streaming needs an output schema that is a z.object'] };
  const shape = outputSchema.shape as Record<string, z.ZodType>;
  const problems: string[] = [];
  const fieldOf = (name: string) => (Object.hasOwn(shape, name) ? unwrap(shape[name]!) : undefined);
  for (const name of spec.text) {
    if (!(fieldOf(name) instanceof z.ZodString)) problems.push(`text field "${name}" is not a string field of the output`);
  }
  const items: { field: string; element: z.ZodType }[] = [];
  for (const name of spec.items) {
    const field = fieldOf(name);
    if (field instanceof z.ZodArray) items.push({ field: name, element: field.element as z.ZodType });
    else problems.push(`items field "${name}" is not an array field of the output`);
  }
  return problems.length > 0 ? { problems } : { plan: { text: [...spec.text], items } };
}

/** The schema inside optional/nullable/default/readonly wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (
    current instanceof z.ZodOptional || current instanceof z.ZodNullable || current instanceof z.ZodDefault ||
    current instanceof z.ZodPrefault || current instanceof z.ZodReadonly
  ) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}
