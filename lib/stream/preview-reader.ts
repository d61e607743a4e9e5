/**
 * The server-side incremental reader of the model's JSON answer: it turns the provider's raw text deltas into the
 * previews the job type declares (`streaming`, lib/jobs/streaming-spec.ts), as ./protocol.ts PreviewEvents, with
 * the redaction the final output of the type gets. One reader per provider call (a fallback route starts a new
 * one), fed through the gateway's AnswerSink (lib/ai/types.ts).
 *
 * Parsing is `@streamparser/json`'s incremental JSON parser, restricted to the streamed fields' paths
 * (`$.<text field>`, `$.<items field>.*`), with partial values on so a string field is seen as it grows. Other
 * fields (a score, a flag) are never previewed: they mean something only once the whole answer is validated.
 *
 * - `text` fields: each growth of the string is a `text` preview of the new characters. With the type's
 *   `security.outputRedaction`, a field whose name the redaction rules treat as secret previews nothing while it
 *   is written and `[REDACTED]` once it is complete (what the final output holds); any other text passes a
 *   SecretTextHoldBack (lib/jobs/text-redaction-stream.ts), which holds back the tail that could still become a
 *   secret and releases it redacted, so the text previews of a field add up to exactly the field's final,
 *   redacted text and never show part of a secret.
 * - `items` fields: each element, once complete, is parsed with the element's schema (an element that fails is
 *   not previewed: the whole answer will fail validation anyway) and, with `outputRedaction`, redacted by the same
 *   rules as the final output (`redactSnapshot`); an items field with a secret name previews nothing (its final
 *   value is `[REDACTED]` whole).
 *
 * Invariants: never throws (malformed JSON stops the previews; the final validation reports it), previews each
 * string field's text once and in order, and previews only what the final output of the type would show.
 */
import { JSONParser } from '@streamparser/json';
import type * as z from 'zod';
import type { AnswerSink } from '../ai/types.ts';
import { isSensitiveKey, REDACTED, redactSnapshot } from '../jobs/redaction.ts';
import type { StreamingPlan } from '../jobs/streaming-spec.ts';
import { SecretTextHoldBack } from '../jobs/text-redaction-stream.ts';
import type { PreviewEvent } from './protocol.ts';

export interface PreviewReaderOptions {
  plan: StreamingPlan;
  /** The job type's `security.outputRedaction`: previews pass the same rules as the final output. */
  redact: boolean;
  /** Receives each preview, in order. Must not throw. */
  emit(event: PreviewEvent): void;
}

/** What one text field has shown so far. */
interface TextField {
  /** Characters of the raw string already consumed. */
  seen: number;
  complete: boolean;
  /** Present when the text passes the secret-shaped text rules (redaction on, field name not secret). */
  holdBack?: SecretTextHoldBack;
  /** Redaction on and the field name is secret: show `[REDACTED]` once complete, nothing before. */
  secretField: boolean;
}

type ParsedValue = { value?: unknown; key?: string | number; stack: readonly { key?: string | number }[]; partial?: boolean };

export class PreviewReader implements AnswerSink {
  readonly #parser: JSONParser;
  readonly #text = new Map<string, TextField>();
  readonly #items = new Map<string, z.ZodType>();
  readonly #options: PreviewReaderOptions;
  #shown = false;
  #stopped = false;

  constructor(options: PreviewReaderOptions) {
    this.#options = options;
    for (const field of options.plan.text) {
      const secretField = options.redact && isSensitiveKey(field);
      this.#text.set(field, { seen: 0, complete: false, secretField, ...(options.redact && !secretField ? { holdBack: new SecretTextHoldBack() } : {}) });
    }
    for (const { field, element } of options.plan.items) {
      if (!(options.redact && isSensitiveKey(field))) this.#items.set(field, element);
    }
    const paths = [...options.plan.text.map((f) => `$.${f}`), ...options.plan.items.map((i) => `$.${i.field}.*`)];
    this.#parser = new JSONParser({ paths, keepStack: false, emitPartialTokens: true, emitPartialValues: true });
    this.#parser.onValue = (info) => this.#onValue(info as ParsedValue);
  }

  /** True once a preview was emitted. */
  get shown(): boolean {
    return this.#shown;
  }

  write(delta: string): void {
    if (this.#stopped) return;
    try {
      this.#parser.write(delta);
    } catch {
      // Not JSON (or text after the object): nothing more can be previewed; validation reports the answer.
      this.#stopped = true;
    }
  }

  #onValue({ value, key, stack, partial }: ParsedValue): void {
    if (stack.length === 1 && typeof key === 'string' && typeof value === 'string') this.#onText(key, value, partial === true);
    else if (stack.length === 2 && typeof key === 'number' && partial !== true) this.#onItem(String(stack[1]?.key), key, value);
  }

  #onText(field: string, value: string, partial: boolean): void {
    const state = this.#text.get(field);
    // A field seen complete once is not previewed again (a repeated key), nor a string that did not grow.
    if (!state || state.complete || value.length < state.seen) return;
    const fresh = value.slice(state.seen);
    state.seen = value.length;
    state.complete = !partial;
    let shown = state.secretField ? '' : state.holdBack ? state.holdBack.push(fresh) : fresh;
    if (state.complete) shown += state.secretField ? REDACTED : (state.holdBack?.end() ?? '');
    if (shown) this.#emit({ type: 'text', field, delta: shown });
  }

  #onItem(field: string, index: number, value: unknown): void {
    const element = this.#items.get(field);
    if (!element) return;
    const parsed = element.safeParse(value);
    if (!parsed.success) return;
    let item: unknown = parsed.data;
    if (this.#options.redact) {
      try {
        item = redactSnapshot(item).content;
      } catch {
        return; // beyond the redaction's size or depth limits: the final output will say what is wrong
      }
    }
    this.#emit({ type: 'item', field, index, item });
  }

  #emit(event: PreviewEvent): void {
    this.#shown = true;
    this.#options.emit(event);
  }
}
