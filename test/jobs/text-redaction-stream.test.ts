/**
 * Streamed text under the secret-shaped text rules: whatever the chunking, what is released adds up to
 * redactText(whole text), and at no moment has any part of a secret been released.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactText, redactionSafePrefixLength } from '../../lib/jobs/redaction.ts';
import { SecretTextHoldBack } from '../../lib/jobs/text-redaction-stream.ts';

const SECRETS = [
  'sk-proj-AbCdEf0123456789_xyz-QRS',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
  'AKIAIOSFODNN7EXAMPLE',
];
const BEARER_TOKEN = 'abcdefghijklmnopqrstuvwxyz0123';
const TEXTS = [
  `Your key ${SECRETS[0]} should never be shared.`,
  `Token: ${SECRETS[1]}, then more words`,
  `AWS id ${SECRETS[2]} and "quoted ${SECRETS[0]}" here`,
  `Header Authorization: Bearer ${BEARER_TOKEN} was sent.`,
  `bearer\n  ${BEARER_TOKEN}`,
  `${SECRETS[0]}`,
  'Nothing secret at all, just sk-short and Bearer abc.',
];

/** Streams `pieces` through a hold-back; returns each release and the running total after each piece. */
function stream(pieces: string[]): { released: string[]; total: string } {
  const holdBack = new SecretTextHoldBack();
  const released = pieces.map((p) => holdBack.push(p));
  released.push(holdBack.end());
  return { released, total: released.join('') };
}

/** Every secret part of `text` that must never be shown: each secret's first 8 characters, and the bearer token's. */
const leaks = (shown: string) => [...SECRETS.map((s) => s.slice(0, 8)), BEARER_TOKEN.slice(0, 8)].filter((s) => shown.includes(s));

/**
 * Why streaming `pieces` of `text` would be unsafe, or undefined: the releases must add up to the redacted text,
 * and each running total must be a prefix of it (so no part of a secret ever showed).
 */
function problemOf(text: string, pieces: string[], checkLeaks = true): string | undefined {
  const { released, total } = stream(pieces);
  const final = redactText(text);
  if (total !== final) return `${JSON.stringify(pieces)} released ${JSON.stringify(total)}`;
  let shown = '';
  for (const part of released) {
    shown += part;
    if (!final.startsWith(shown) || (checkLeaks && leaks(shown).length > 0)) return `${JSON.stringify(pieces)} showed ${JSON.stringify(shown)}`;
  }
  return undefined;
}

const expectSafe = (text: string, pieces: string[]) => expect(problemOf(text, pieces)).toBeUndefined();

describe('SecretTextHoldBack', () => {
  it.each(TEXTS)('adds up to the redacted text, split in two at every position: %s', (text) => {
    const problems = [];
    for (let i = 0; i <= text.length; i += 1) problems.push(problemOf(text, [text.slice(0, i), text.slice(i)]));
    expect(problems.filter(Boolean)).toEqual([]);
  });

  it.each(TEXTS)('adds up to the redacted text, split in three at every pair of positions: %s', (text) => {
    const problems = [];
    for (let i = 0; i <= text.length; i += 1) {
      for (let j = i; j <= text.length; j += 1) problems.push(problemOf(text, [text.slice(0, i), text.slice(i, j), text.slice(j)]));
    }
    expect(problems.filter(Boolean)).toEqual([]);
  });

  it('adds up to the redacted text one character at a time, and shows words as they end', () => {
    const text = `Well done. Your key ${SECRETS[0]} leaked.`;
    const { released } = stream([...text]);
    expectSafe(text, [...text]);
    expect(released.filter(Boolean).slice(0, 3)).toEqual(['Well ', 'done. ', 'Your ']);
    expect(released.join('')).toContain(REDACTED);
  });

  it('holds for any text built from words, secrets and separators, however it is chunked', () => {
    const word = fc.constantFrom('the', 'key', 'Bearer', 'sk-', 'eyJ', 'AKIA', 'abc.def', '=', 'x_y', ...SECRETS, BEARER_TOKEN);
    const sep = fc.constantFrom(' ', '\n', ', ', '"', '. ', '', ':', '/', '-');
    const text = fc.array(fc.tuple(word, sep), { maxLength: 12 }).map((parts) => parts.map(([w, s]) => w + s).join(''));
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 6 }), (t, cuts) => {
        const at = [...new Set(cuts.map((c) => c % (t.length + 1)))].sort((a, b) => a - b);
        const pieces = [0, ...at].map((start, k) => t.slice(start, [...at, t.length][k]));
        // The prefix property alone: here a bare token-like word is no secret (no `Bearer` before it).
        return problemOf(t, pieces, false) === undefined;
      }),
      { numRuns: 500 },
    );
  });
});

describe('redactionSafePrefixLength', () => {
  it('ends after the last character no secret can contain', () => {
    expect(redactionSafePrefixLength('hello wor')).toBe(6);
    expect(redactionSafePrefixLength('a "sk-abc')).toBe(3);
    expect(redactionSafePrefixLength('sk-abcdef')).toBe(0);
    expect(redactionSafePrefixLength('path a/b.c=d')).toBe(5);
  });

  it('does not end after whitespace that follows the word bearer, which a token may still follow', () => {
    expect(redactionSafePrefixLength('send Bearer ')).toBe(5);
    expect(redactionSafePrefixLength('send Bearer \n ')).toBe(5);
    expect(redactionSafePrefixLength('a nonbearer x')).toBe(12);
  });
});
