/** The provider reads every answer as a stream: deltas as they arrive, usage from the last chunk, and the ways a stream fails. */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PROVIDER_EVENT_CHARS } from '../../lib/ai/chat-stream.ts';
import { startMockAiServer, type MockAiServer } from '../../lib/dev/mock-ai-server.ts';
import {
  ProviderFirstTokenTimeoutError,
  ProviderRateLimitedError,
  ProviderStreamCutError,
  ProviderTimeoutError,
  ProviderUnavailableError,
} from '../../lib/jobs/failures.ts';
import { waitFor } from '../helpers/ports.ts';
import { chat, mockProvider, rejectionOf } from './helpers.ts';

let server: MockAiServer;
beforeAll(async () => {
  server = await startMockAiServer({ apiKey: 'test-key' });
});
afterAll(async () => server.close());

interface CallOptions { firstTokenTimeoutMs?: number; timeoutMs?: number; signal?: AbortSignal; url?: string; onDelta?: (t: string) => void }

/** One call of `text`, collecting its deltas. */
function call(text: string, opts: CallOptions = {}) {
  const deltas: string[] = [];
  const reply = mockProvider('mock', opts.url ?? server.url, opts.timeoutMs).complete(
    { ...chat(text), model: 'mock-chat' },
    {
      apiKey: 'test-key', signal: opts.signal ?? new AbortController().signal, firstTokenTimeoutMs: opts.firstTokenTimeoutMs,
      onDelta: opts.onDelta ?? ((t) => void deltas.push(t)),
    },
  );
  return { reply, deltas };
}

describe('a streamed provider call', () => {
  it('asks for a stream with usage, reports each delta in order, and returns the whole text with the usage of the last chunk', async () => {
    const { reply, deltas } = call('Stream this answer please');
    const out = await reply;
    expect(server.requests.at(-1)).toMatchObject({ stream: true, stream_options: { include_usage: true }, response_format: { type: 'json_object' } });
    const sent = server.answers.at(-1)!;
    expect(sent.streamed).toBe(true);
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(sent.content);
    expect(out.content).toBe(sent.content);
    expect(out.usage).toEqual({ promptTokens: sent.usage!.prompt_tokens, completionTokens: sent.usage!.completion_tokens, totalTokens: sent.usage!.total_tokens });
  });

  it('reports zero usage when the stream carries none', async () => {
    const out = await call('hello [scenario:no_usage]').reply;
    expect(out.usage).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
    expect(JSON.parse(out.content)).toHaveProperty('echo');
  });

  it('fails with ProviderFirstTokenTimeoutError (PROVIDER_TIMEOUT, retryable, fallback-eligible) when no token comes in time, and hangs up', async () => {
    const before = server.disconnects;
    const err = await rejectionOf(call('[first_token:5000] wait', { firstTokenTimeoutMs: 300 }).reply);
    expect(err).toBeInstanceOf(ProviderFirstTokenTimeoutError);
    expect(err).toBeInstanceOf(ProviderTimeoutError);
    expect(err).toMatchObject({ code: 'PROVIDER_TIMEOUT', retryable: true, fallbackEligible: true, message: 'mock sent no token within 300 ms' });
    await waitFor(async () => server.disconnects > before, 'the server to see the hang-up', 2_000);
  });

  it('counts headers alone as no token: a provider that never answers also misses the first-token deadline', async () => {
    const err = await rejectionOf(call('[scenario:hang] x', { firstTokenTimeoutMs: 200, timeoutMs: 10_000 }).reply);
    expect(err).toBeInstanceOf(ProviderFirstTokenTimeoutError);
  });

  it('lets a slow stream finish once its first token came in time (the total deadline still holds)', async () => {
    const { reply, deltas } = call('[tps:200] [first_token:50] slow but steady', { firstTokenTimeoutMs: 1_000 });
    const out = await reply;
    expect(deltas.join('')).toBe(out.content);
    const total = await rejectionOf(call('[tps:5] too slow overall', { firstTokenTimeoutMs: 1_000, timeoutMs: 600 }).reply);
    expect(total).toBeInstanceOf(ProviderTimeoutError);
    expect(total).not.toBeInstanceOf(ProviderFirstTokenTimeoutError);
  });

  it('fails with ProviderStreamCutError (PROVIDER_UNAVAILABLE, retryable, fallback-eligible) when the stream is cut mid-answer', async () => {
    const { reply, deltas } = call('[scenario:cut:6] cut me');
    const err = await rejectionOf(reply);
    expect(err).toBeInstanceOf(ProviderStreamCutError);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retryable: true, fallbackEligible: true });
    expect(deltas).toHaveLength(6);
  });

  it('maps a rate-limit error event mid-stream to ProviderRateLimitedError, after the deltas that came before it', async () => {
    const { reply, deltas } = call('[scenario:rate_limit_mid:4] limit me');
    const err = await rejectionOf(reply);
    expect(err).toBeInstanceOf(ProviderRateLimitedError);
    expect(err).toMatchObject({ retryable: true, fallbackEligible: true, retryAfterMs: undefined });
    expect(deltas).toHaveLength(4);
  });

  it("rethrows the caller's abort mid-stream at once, and the server sees the hang-up", async () => {
    const before = server.disconnects;
    const controller = new AbortController();
    const reason = new Error('cancelled by the engine');
    let abortedAfter = 0;
    const { reply } = call('[tps:10] abort me', {
      signal: controller.signal,
      onDelta: () => {
        abortedAfter += 1;
        if (abortedAfter === 2) controller.abort(reason);
      },
    });
    expect(await rejectionOf(reply)).toBe(reason);
    expect(abortedAfter).toBe(2);
    await waitFor(async () => server.disconnects > before, 'the server to see the hang-up', 2_000);
  });

  it('rethrows what onDelta throws, unchanged, and stops reading', async () => {
    const before = server.disconnects;
    const bug = new Error('preview sink bug');
    const { reply } = call('[tps:50] sink fails', { onDelta: () => { throw bug; } });
    expect(await rejectionOf(reply)).toBe(bug);
    await waitFor(async () => server.disconnects > before, 'the server to see the hang-up', 2_000);
  });
});

describe('streams that break the protocol', () => {
  let raw: Server;
  let url: string;
  /** Body by the first word of the user message. */
  const bodies: Record<string, string> = {
    nofinish: `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: '{"a":' }, finish_reason: null }] })}\n\n`,
    overloaded: `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: '{' }, finish_reason: null }] })}\n\n` +
      `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error', code: 'overloaded' } })}\n\n`,
    garbled: `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: '{' }, finish_reason: null }] })}\n\n` +
      'data: {"object": "chat.completion.chunk", "choi\n\n',
    huge: `data: "${'x'.repeat(MAX_PROVIDER_EVENT_CHARS + 1024)}`,
  };
  beforeAll(async () => {
    raw = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const word = (JSON.parse(body) as { messages: { content: string }[] }).messages.at(-1)!.content.split(' ')[0]!;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (word !== 'keepalive') return void res.end(bodies[word]);
        // DeepSeek under load: SSE comments to hold the connection, and no token.
        const timer = setInterval(() => res.write(': keep-alive\n\n'), 50);
        res.on('close', () => clearInterval(timer));
      });
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(raw.address() as { port: number }).port}/v1`;
  });
  afterAll(async () => {
    raw.closeAllConnections();
    await new Promise<void>((r) => raw.close(() => r()));
  });

  it('a stream that ends cleanly without a finish reason is cut, not an answer', async () => {
    expect(await rejectionOf(call('nofinish', { url }).reply)).toBeInstanceOf(ProviderStreamCutError);
  });

  it('keep-alive comments are bytes, not tokens: they do not hold off the first-token deadline', async () => {
    expect(await rejectionOf(call('keepalive', { url, firstTokenTimeoutMs: 300 }).reply)).toBeInstanceOf(ProviderFirstTokenTimeoutError);
  });

  it('an event that is not JSON, or one that outgrows the bound before it ends, is a cut stream', async () => {
    expect(await rejectionOf(call('garbled', { url }).reply)).toBeInstanceOf(ProviderStreamCutError);
    expect(await rejectionOf(call('huge', { url }).reply)).toBeInstanceOf(ProviderStreamCutError);
  });

  it('any other error event mid-stream is ProviderUnavailableError naming its code', async () => {
    const err = await rejectionOf(call('overloaded', { url }).reply);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err).not.toBeInstanceOf(ProviderStreamCutError);
    expect((err as Error).message).toBe('mock reported an error mid-stream (overloaded, server_error)');
  });
});
