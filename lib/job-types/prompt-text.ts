/**
 * Text conventions shared by the job types' prompts, so prompts, mock responses and the mock responder agree:
 *
 * - Every system prompt starts with a task line, `Task: <prompt key> <version>` (e.g. `Task: quiz_generation v1`).
 *   It tells the model nothing harmful and lets the local mock provider recognise the job type from the request
 *   alone (lib/dev/mock-responder.ts), the way a real provider sees it.
 * - User-provided text goes inside a tagged block (`<source_text>…</source_text>`); the system prompt says that
 *   what is inside is material, never instructions.
 * - Scalar parameters go on `Label: value` lines, which the type's mock response reads back.
 */

/** The first line of a system prompt for prompt `key` at `version`. */
export function taskLine(key: string, version: string): string {
  return `Task: ${key} ${version}`;
}

/** The first line of `text`, without its line break (the whole text when it has one line). */
export function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return (end === -1 ? text : text.slice(0, end)).trimEnd();
}

/**
 * `text` inside `<tag>…</tag>`. A closing tag inside the text is defused (`</tag` → `< /tag`) so learner text
 * cannot end the block early and pose as instructions.
 */
export function taggedBlock(tag: string, text: string): string {
  const defused = text.split(`</${tag}`).join(`< /${tag}`);
  return `<${tag}>\n${defused}\n</${tag}>`;
}

/** The content of the first `<tag>…</tag>` block in `message`, or undefined. Inverse of {@link taggedBlock}. */
export function readTaggedBlock(message: string, tag: string): string | undefined {
  const start = message.indexOf(`<${tag}>\n`);
  const end = message.lastIndexOf(`\n</${tag}>`);
  if (start === -1 || end === -1 || end < start) return undefined;
  return message.slice(start + tag.length + 3, end);
}

/** The value of the first `Label: value` line in `message`, trimmed, or undefined. */
export function readLabelledLine(message: string, label: string): string | undefined {
  const prefix = `${label}: `;
  const line = message.split('\n').find((l) => l.startsWith(prefix));
  return line?.slice(prefix.length).trim();
}

/** {@link readLabelledLine} as an integer clamped to [min, max]; `fallback` when absent or not a number. */
export function readLabelledInt(message: string, label: string, range: { min: number; max: number; fallback: number }): number {
  const value = Number.parseInt(readLabelledLine(message, label) ?? '', 10);
  if (!Number.isFinite(value)) return range.fallback;
  return Math.min(range.max, Math.max(range.min, value));
}

/** The sentences of `text` (split after `.`, `!`, `?` or a line break), trimmed, empty ones dropped. */
export function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The start of `text` on one line, cut at a word boundary to at most `maxChars` characters, `…` when cut. */
export function excerpt(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= maxChars) return flat;
  const cut = flat.slice(0, maxChars - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > 0 ? cut.slice(0, space) : cut}…`;
}
