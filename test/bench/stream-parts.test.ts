/**
 * bench:stream's latency rests on one mapping (bench/stream-parts.ts): character k of a streamed feedback was
 * written with the provider's token ⌊(start + k) / 4⌋ of the answer. Checked against the mock's own tokenizer and
 * a real mock server streaming the bench's answer; and the fan-out tally.
 */
import { describe, expect, it } from 'vitest';
import { startMockAiServer } from '../../lib/dev/mock-ai-server.ts';
import { tokenize } from '../../lib/dev/mock-replies.ts';
import { TokenClock, benchAnswer, tally } from '../../bench/stream-parts.ts';

describe('bench:stream parts', () => {
  it('times each feedback character by the token that carried it', async () => {
    const clock = new TokenClock();
    const mock = await startMockAiServer({ respond: () => benchAnswer('stream-bench-job-7', 12), onToken: clock.onToken });
    try {
      const res = await fetch(`${mock.url}/chat/completions`, {
        method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'Concept: stream-bench-job-7' }] }),
      });
      await res.text();
    } finally {
      await mock.close();
    }
    const content = benchAnswer('stream-bench-job-7', 12);
    const feedback = JSON.parse(content).feedback as string;
    const tokens = tokenize(content);
    const start = content.indexOf(feedback);
    for (let k = 0; k < feedback.length; k += 1) {
      const index = Math.floor((start + k) / 4);
      expect(tokens[index]).toContain(content[start + k]);
      expect(clock.writtenAt('stream-bench-job-7', 12, k)).toEqual(expect.any(Number));
    }
    expect(clock.writtenAt('stream-bench-job-7', 12, feedback.length - 1)).toBeGreaterThanOrEqual(clock.writtenAt('stream-bench-job-7', 12, 0)!);
  });

  it('counts a subscriber complete only with every seq once and in order', () => {
    const received = [new Map([['J', [1, 2, 3]]]), new Map([['J', [1, 3, 2]]]), new Map([['J', [1, 1, 2, 3]]]), new Map([['J', [1, 3]]])];
    expect(tally(received, 'J', 3)).toEqual({ complete: 1, missing: 1, duplicates: 1, outOfOrder: 2 });
  });
});
