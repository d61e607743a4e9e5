/** The incremental reader of the model's JSON answer: previews of the declared fields only, whatever the chunking, redacted as the final output. */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { REDACTED, redactSnapshot, redactText } from '../../lib/jobs/redaction.ts';
import type { StreamingPlan } from '../../lib/jobs/streaming-spec.ts';
import { PreviewReader } from '../../lib/stream/preview-reader.ts';
import type { PreviewEvent } from '../../lib/stream/protocol.ts';

const question = z.object({ question: z.string().min(1), options: z.array(z.string()).min(2) });
const PLAN: StreamingPlan = { text: ['feedback'], items: [{ field: 'questions', element: question }, { field: 'gaps', element: z.string() }] };

/** Feeds `pieces` to a fresh reader; returns its previews and whether it said it had shown something before the end. */
function read(pieces: readonly string[], opts: { plan?: StreamingPlan; redact?: boolean } = {}) {
  const previews: PreviewEvent[] = [];
  const reader = new PreviewReader({ plan: opts.plan ?? PLAN, redact: opts.redact ?? false, emit: (e) => previews.push(e) });
  const shownAfter: boolean[] = [];
  for (const piece of pieces) {
    reader.write(piece);
    shownAfter.push(reader.shown);
  }
  return { previews, shownAfter };
}

const textOf = (previews: PreviewEvent[], field: string) => previews.filter((p) => p.type === 'text' && p.field === field).map((p) => (p as { delta: string }).delta).join('');
const itemsOf = (previews: PreviewEvent[], field: string) => previews.filter((p) => p.type === 'item' && p.field === field).map((p) => [(p as { index: number }).index, (p as { item: unknown }).item]);
const chunks = (text: string, size: number) => text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'gu')) ?? [];

const ANSWER = {
  score: 72,
  gaps: ['No example', 'Jargon: "entropy" \u00e9t\u00e9 \ud83d\ude00'],
  feedback: 'Good start.\nSay "why" it matters \u2014 then give an example \ud83d\ude00.',
  questions: [
    { question: 'Q1?', options: ['a', 'b'], extra: 'stripped by the schema' },
    { question: '', options: ['a', 'b'] },
    { question: 'Q3?', options: ['a', 'b', 'c'] },
  ],
};
const DOC = JSON.stringify(ANSWER, null, 1);

describe('PreviewReader', () => {
  it('previews the text field as it grows and each valid element once complete, nothing else', () => {
    const { previews, shownAfter } = read(chunks(DOC, 4));
    expect(textOf(previews, 'feedback')).toBe(ANSWER.feedback);
    expect(previews.filter((p) => p.type === 'text').length).toBeGreaterThan(5);
    expect(itemsOf(previews, 'gaps')).toEqual([[0, 'No example'], [1, ANSWER.gaps[1]]]);
    // The second question fails the element's schema: not previewed; the others as the schema outputs them.
    expect(itemsOf(previews, 'questions')).toEqual([[0, { question: 'Q1?', options: ['a', 'b'] }], [2, { question: 'Q3?', options: ['a', 'b', 'c'] }]]);
    expect(JSON.stringify(previews)).not.toContain('72');
    expect(shownAfter[0]).toBe(false);
    expect(shownAfter.at(-1)).toBe(true);
  });

  it('gives the same previews however the answer is split (escapes and surrogate pairs included)', () => {
    const whole = read([DOC]).previews;
    const expected = { feedback: textOf(whole, 'feedback'), gaps: itemsOf(whole, 'gaps'), questions: itemsOf(whole, 'questions') };
    const escaped = JSON.stringify(ANSWER).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    for (const doc of [DOC, escaped]) {
      for (let i = 0; i <= doc.length; i += 1) {
        const { previews } = read([doc.slice(0, i), doc.slice(i)]);
        expect({ feedback: textOf(previews, 'feedback'), gaps: itemsOf(previews, 'gaps'), questions: itemsOf(previews, 'questions') }).toEqual(expected);
      }
    }
    expect(textOf(read([...DOC]).previews, 'feedback')).toBe(ANSWER.feedback);
  });

  it('never throws on an answer that is not JSON, and previews nothing more after it breaks', () => {
    const events = read(['{"feedback": "fine so', 'far" ]] garbage', '{"feedback": "again"}']).previews;
    expect(textOf(events, 'feedback')).toBe('fine sofar');
    expect(read(['```json\n{"feedback": "x"}']).previews).toEqual([]);
    expect(read(['{"feedback": 42, "gaps": "not an array"}']).previews).toEqual([]);
  });

  it('previews a field only at the top level, and only its first value when a key repeats', () => {
    const { previews } = read(['{"questions": [{"feedback": "nested", "question": "Q", "options": ["a","b"]}], "feedback": "top", "feedback": "again"}']);
    expect(textOf(previews, 'feedback')).toBe('top');
  });
});

describe('PreviewReader with the type\'s output redaction', () => {
  const key = 'sk-proj-AbCdEf0123456789_xyz-QRS';
  const feedback = `Do not paste ${key} or Bearer abcdefghijklmnopqrstuvwxyz0123 in an answer.`;

  it('shows the text exactly as the final redacted field, never part of a secret, split at every position', () => {
    const doc = JSON.stringify({ feedback });
    const final = redactText(feedback);
    for (let i = 0; i <= doc.length; i += 1) {
      const { previews } = read([doc.slice(0, i), doc.slice(i)], { redact: true });
      let shown = '';
      for (const p of previews) {
        shown += (p as { delta: string }).delta;
        expect(final.startsWith(shown)).toBe(true);
      }
      expect(shown).toBe(final);
    }
    const byChar = textOf(read([...doc], { redact: true }).previews, 'feedback');
    expect(byChar).toBe(final);
    expect(byChar).not.toContain(key.slice(0, 8));
  });

  it('redacts each item as the final output is redacted (secret names and secret-shaped text)', () => {
    const element = z.object({ question: z.string(), apiKey: z.string().optional() });
    const plan: StreamingPlan = { text: [], items: [{ field: 'questions', element }] };
    const item = { question: `What is ${key}?`, apiKey: 'plain-value' };
    const { previews } = read([JSON.stringify({ questions: [item] })], { plan, redact: true });
    expect(itemsOf(previews, 'questions')).toEqual([[0, { question: `What is ${REDACTED}?`, apiKey: REDACTED }]]);
    expect(itemsOf(previews, 'questions')[0]![1]).toEqual(redactSnapshot(item).content);
  });

  it('shows a secret-named text field only as [REDACTED] once complete, and no item of a secret-named array', () => {
    const plan: StreamingPlan = { text: ['accessToken'], items: [{ field: 'secrets', element: z.string() }] };
    const doc = JSON.stringify({ accessToken: 'tok_live_123 and more', secrets: ['a', 'b'] });
    const { previews } = read(chunks(doc, 3), { plan, redact: true });
    expect(previews).toEqual([{ type: 'text', field: 'accessToken', delta: REDACTED }]);
    // Without the type's redaction the same answer previews as written (the final output keeps it too).
    expect(textOf(read(chunks(doc, 3), { plan }).previews, 'accessToken')).toBe('tok_live_123 and more');
  });
});
