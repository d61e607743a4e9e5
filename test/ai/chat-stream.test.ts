/**
 * The event-stream reader of a streamed chat completion (lib/ai/chat-stream.ts) on bytes cut anywhere: the
 * answer, its deltas and usage do not depend on where the network split the stream, and the SDK's in-stream rules
 * hold. The provider's whole call over HTTP is test/ai/provider-streaming.test.ts's.
 */
import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { EventStreamError, MAX_PROVIDER_EVENT_CHARS, readChatStream } from '../../lib/ai/chat-stream.ts';

const encoder = new TextEncoder();

function chunk(content: string | null, extra: object = {}): string {
  const choices = content === null ? [] : [{ index: 0, delta: { content }, finish_reason: null }];
  return `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices, usage: null, ...extra })}\n\n`;
}

const finish = `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null })}\n\n`;
const usage = `data: ${JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } })}\n\n`;

/** A response whose body is `bytes` cut into reads at `cuts` (byte offsets); `cancelled` tells whether the reader cancelled it. */
function responseOf(bytes: Uint8Array, cuts: number[] = []): { response: Response; cancelled: () => boolean } {
  let cancelled = false;
  const ends = [...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
  let start = 0;
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i >= ends.length) return controller.close();
      controller.enqueue(bytes.subarray(start, ends[i]));
      start = ends[i]!;
      i += 1;
    },
    cancel() {
      cancelled = true;
    },
  });
  return { response: new Response(body, { headers: { 'content-type': 'text/event-stream', 'x-request-id': 'r1' } }), cancelled: () => cancelled };
}

async function read(text: string, cuts: number[] = []) {
  const deltas: string[] = [];
  let firstTokens = 0;
  const answer = await readChatStream(responseOf(encoder.encode(text), cuts).response, {
    onFirstToken: () => { firstTokens += 1; },
    onDelta: (t) => deltas.push(t),
  });
  return { answer, deltas, firstTokens };
}

describe('reading a chat completion event stream', () => {
  const text = `${chunk('')}: keep-alive\n\n${chunk('Grüße, ')}${chunk('wörld 🌍')}${finish}${usage}data: [DONE]\n\n`;
  const whole = { content: 'Grüße, wörld 🌍', usage: { promptTokens: 7, completionTokens: 3, totalTokens: 10 }, finished: true };

  it('folds deltas, finish and usage, the same wherever the bytes are cut (inside a multi-byte character too)', async () => {
    const bytes = encoder.encode(text);
    expect(await read(text)).toEqual({ answer: whole, deltas: ['Grüße, ', 'wörld 🌍'], firstTokens: 1 });
    for (let cut = 1; cut < bytes.length; cut += 1) {
      const { answer, deltas } = await read(text, [cut, cut + 3]);
      expect({ answer, deltas }, `cut at ${cut}`).toEqual({ answer: whole, deltas: ['Grüße, ', 'wörld 🌍'] });
    }
  });

  it('reads CRLF and CR line endings and data split over several lines as the SSE grammar says', async () => {
    const json = JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: 'stop' }] });
    const crlf = `data: ${json}\r\n\r\nevent: message\rdata: [DONE]\r\r`;
    expect((await read(crlf, [crlf.indexOf('\r\n') + 1])).answer).toMatchObject({ content: 'a', finished: true });
    const split = `data: {"id":"c1","choices":\ndata: [{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}\n\n`;
    expect((await read(split)).answer).toMatchObject({ content: 'b', finished: true });
  });

  it('counts reasoning as the first token without adding it to the answer, and ignores events without data', async () => {
    const reasoning = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { reasoning_content: 'hmm' }, finish_reason: null }] })}\n\nevent: ping\n\n`;
    const { answer, firstTokens, deltas } = await read(`${reasoning}${chunk('x')}${finish}data: [DONE]\n\n`);
    expect({ content: answer.content, firstTokens, deltas }).toEqual({ content: 'x', firstTokens: 1, deltas: ['x'] });
    expect(answer.usage).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
  });

  it('ignores what follows [DONE] yet reads it to the end, so the connection can be kept', async () => {
    const { response, cancelled } = responseOf(encoder.encode(`${chunk('a')}${finish}data: [DONE]\n\n${chunk('late')}data: {not json\n\n`));
    const answer = await readChatStream(response, { onFirstToken: () => undefined });
    expect(answer).toMatchObject({ content: 'a', finished: true });
    expect(cancelled()).toBe(false);
  });

  it("throws an error event as the SDK's APIError, after the deltas before it, and cancels the body", async () => {
    const deltas: string[] = [];
    const error = { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' };
    const { response, cancelled } = responseOf(encoder.encode(`${chunk('a')}data: ${JSON.stringify({ error })}\n\n`), [10]);
    const failure = await readChatStream(response, { onFirstToken: () => undefined, onDelta: (t) => deltas.push(t) }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(APIError);
    expect(failure).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect((failure as APIError).headers?.get('x-request-id')).toBe('r1');
    expect(deltas).toEqual(['a']);
    expect(cancelled()).toBe(true);
  });

  it('throws a SyntaxError for an event that is not JSON, and EventStreamError for one past the size bound', async () => {
    await expect(read(`${chunk('a')}data: {"choices": [\n\n`)).rejects.toBeInstanceOf(SyntaxError);
    // The bound is on what waits for the rest of an event: an event larger than it arrives in several reads.
    const huge = `data: "${'x'.repeat(2 * MAX_PROVIDER_EVENT_CHARS)}"\n\n`;
    await expect(read(huge, Array.from({ length: 80 }, (_, i) => (i + 1) * 32_768))).rejects.toBeInstanceOf(EventStreamError);
  });

  it('reads a stream of 20,000 events delivered in one read whole', async () => {
    const many = `${Array.from({ length: 20_000 }, (_, i) => chunk(`t${i} `)).join('')}${finish}data: [DONE]\n\n`;
    const { answer, deltas } = await read(many);
    expect(deltas).toHaveLength(20_000);
    expect(answer.content.endsWith('t19999 ')).toBe(true);
  });
});
