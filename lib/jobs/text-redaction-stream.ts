/**
 * Secret-shaped text rules (./redaction.ts, rule 2) applied to text that arrives in pieces, for the previews of
 * a job type with `security.outputRedaction`.
 *
 * Hold-back: each piece is added to what is held; the longest held prefix that redacts the same whatever follows
 * (`redactionSafePrefixLength`: it ends at a character no secret can contain, such as a space or a quote) is
 * redacted and released, the tail is held until more text or {@link SecretTextHoldBack.end}. A secret split across
 * pieces at any position is therefore held whole until it is known, and released as `[REDACTED]`; nothing of it
 * is ever released. Invariant: the concatenation of everything released equals `redactText` of the concatenation
 * of everything pushed, so the preview of a field ends exactly as the field's final, redacted text.
 *
 * What it costs: a word is shown once the character after it arrives; a long run without a space or punctuation
 * (a URL, a base64 blob) is held until it ends.
 */
import { redactText, redactionSafePrefixLength } from './redaction.ts';

export class SecretTextHoldBack {
  #held = '';

  /** Adds `piece`; returns the text that may be shown now (possibly ''), already redacted. */
  push(piece: string): string {
    const known = this.#held.length;
    this.#held += piece;
    // What was held has no safe cut, and appending text never makes one there: look at the new piece only.
    const safe = redactionSafePrefixLength(this.#held, known);
    if (safe === 0) return '';
    const released = redactText(this.#held.slice(0, safe));
    this.#held = this.#held.slice(safe);
    return released;
  }

  /** The text is complete: returns what was held, redacted. */
  end(): string {
    const released = redactText(this.#held);
    this.#held = '';
    return released;
  }
}
