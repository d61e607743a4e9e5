/** The mock provider's streamed answers, read off the wire as a client sees them (raw SSE, no SDK). */
import { afterEach, describe, expect, it } from 'vitest';
import { mockAiServerOptionsFromEnv, parseMarkers, startMockAiServer, type MockAiServer } from '../../lib/dev/mock-ai-server.ts';
import { chat } from './helpers.ts';

const servers: MockAiServer[] = [];
async function start(options: Parameters<typeof startMockAiServer>[0] = {}) {
  const server = await startMockAiServer(options);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** POSTs a chat request for `text`; `stream` adds `stream: true` and, unless false, `include_usage`. */
function post(server: MockAiServer, text: string, stream?: { includeUsage?: boolean }, signal?: AbortSignal) {
  return fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'mock-chat', messages: chat(text).messages, response_format: { type: 'json_object' },
      ...(stream ? { stream: true, ...(stream.includeUsage === false ? {} : { stream_options: { include_usage: true } }) } : {}),
    }),
    signal,
  });
}

/** The `data:` payloads of an SSE body, in order (`[DONE]` kept as the string). */
function events(body: string): unknown[] {
  return body.split('\n\n').filter((block) => block.startsWith('data: ')).map((block) => {
    const data = block.slice('data: '.length);
    return data === '[DONE]' ? data : JSON.parse(data);
  });
}

type Chunk = { object: string; choices: { delta: { content?: string; role?: string }; finish_reason: string | null }[]; usage?: unknown; error?: unknown };
const contentOf = (chunks: Chunk[]) => chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');

describe('a streamed answer', () => {
  it('is chat.completion.chunk events that add up to the answer, then a finish, a usage chunk and [DONE]', async () => {
    const server = await start();
    const plain = await (await post(server, 'stream me')).json() as { choices: { message: { content: string } }[]; usage: unknown };
    const res = await post(server, 'stream me', {});
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const all = events(await res.text());
    expect(all.at(-1)).toBe('[DONE]');
    const chunks = all.slice(0, -1) as Chunk[];
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect(contentOf(chunks)).toBe(plain.choices[0]!.message.content);
    const finish = chunks.findIndex((c) => c.choices[0]?.finish_reason === 'stop');
    expect(chunks.slice(finish + 1)).toEqual([expect.objectContaining({ choices: [], usage: plain.usage })]);
    expect(chunks.slice(0, finish + 1).every((c) => c.usage === null)).toBe(true);
    // One token (four characters) a content chunk, and the usage counts them.
    const tokens = chunks.filter((c) => c.choices[0]?.delta?.content);
    expect(tokens.every((c) => c.choices[0]!.delta.content!.length <= 4)).toBe(true);
    expect((plain.usage as { completion_tokens: number }).completion_tokens).toBe(tokens.length);
    expect(server.answers.map((a) => [a.streamed, a.content])).toEqual([[false, contentOf(chunks)], [true, contentOf(chunks)]]);
  });

  it('carries no usage chunk (nor usage fields) without include_usage, nor with the no_usage scenario', async () => {
    const server = await start();
    const without = events(await (await post(server, 'q', { includeUsage: false })).text()).slice(0, -1) as Chunk[];
    expect(without.some((c) => 'usage' in c)).toBe(false);
    const noUsage = events(await (await post(server, 'q [scenario:no_usage]', {})).text()).slice(0, -1) as Chunk[];
    expect(noUsage.some((c) => c.choices.length === 0)).toBe(false);
  });

  it('is paced: tokens a second and a delay before the first token, from options or markers (lower bounds only)', async () => {
    const paced = await start({ tokensPerSecond: 40 });
    let started = Date.now();
    const chunks = events(await (await post(paced, 'pace me', {})).text()).slice(0, -1) as Chunk[];
    const tokens = chunks.filter((c) => c.choices[0]?.delta?.content).length;
    expect(Date.now() - started).toBeGreaterThanOrEqual(((tokens - 1) * 1000) / 40 - 5);
    const plain = await start();
    started = Date.now();
    await (await post(plain, 'pace me [first_token:300] [tps:1000]', {})).text();
    expect(Date.now() - started).toBeGreaterThanOrEqual(295);
  });

  it('cut:<n> sends n tokens and closes the socket, which is not counted as a client disconnect', async () => {
    const server = await start();
    const res = await post(server, 'cut me [scenario:cut:5]', {});
    const reader = res.body!.getReader();
    let text = '';
    const failure = await (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return undefined;
        text += new TextDecoder().decode(value);
      }
    })().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(TypeError);
    const chunks = events(text) as Chunk[];
    expect(chunks.filter((c) => c.choices[0]?.delta?.content)).toHaveLength(5);
    expect(chunks.some((c) => c.choices[0]?.finish_reason)).toBe(false);
    expect(server.disconnects).toBe(0);
    expect(server.answers).toHaveLength(0);
  });

  it('rate_limit_mid:<n> sends n tokens, then a rate-limit error event, and ends', async () => {
    const server = await start({ scenario: 'rate_limit_mid:3' });
    const all = events(await (await post(server, 'limit me', {})).text()) as Chunk[];
    expect(all.filter((c) => c.choices?.[0]?.delta?.content)).toHaveLength(3);
    expect(all.at(-1)).toEqual({ error: { message: expect.any(String), type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
  });

  it('answers the same scenarios without streaming as before: cut drops the connection, rate_limit_mid is a 429', async () => {
    const server = await start();
    expect(await post(server, '[scenario:cut:5]').catch((err: unknown) => err)).toBeInstanceOf(TypeError);
    const limited = await post(server, '[scenario:rate_limit_mid:5]');
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '1']);
  });

  it('counts a client that leaves mid-stream as a disconnect and stops writing', async () => {
    const server = await start({ tokensPerSecond: 20 });
    const controller = new AbortController();
    const res = await post(server, 'leave me', {}, controller.signal);
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    for (let i = 0; i < 100 && server.disconnects === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(server.disconnects).toBe(1);
    expect(server.answers).toHaveLength(0);
  });
});

describe('pace markers and environment', () => {
  it('reads tps and first_token markers, ignoring malformed ones', () => {
    expect(parseMarkers('[tps:12.5] [first_token:800] [scenario:cut:3]')).toEqual({ tokensPerSecond: 12.5, firstTokenMs: 800, scenario: 'cut:3' });
    expect(parseMarkers('[tps:fast] [first_token:-1]')).toEqual({});
  });

  it('reads the streaming pace and a mid-stream scenario from the environment, and rejects nonsense', () => {
    expect(mockAiServerOptionsFromEnv({ MOCK_AI_TOKENS_PER_SECOND: '50', MOCK_AI_FIRST_TOKEN_MS: '2000', MOCK_AI_SCENARIO: 'cut:20' })).toEqual({
      port: 0, latencyMs: 0, failureRate: 0, scenario: 'cut:20', tokensPerSecond: 50, firstTokenDelayMs: 2000,
    });
    expect(() => mockAiServerOptionsFromEnv({ MOCK_AI_TOKENS_PER_SECOND: 'lots' })).toThrow(/MOCK_AI_TOKENS_PER_SECOND/);
  });
});
