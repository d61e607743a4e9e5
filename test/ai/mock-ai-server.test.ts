import { afterEach, describe, expect, it } from 'vitest';
import { getPrompt } from '../../lib/ai/prompts/registry.ts';
import { mockAiServerOptionsFromEnv, parseMarkers, startMockAiServer, type MockAiServer } from '../../lib/dev/mock-ai-server.ts';
import { ConfigurationError } from '../../lib/config/aws.ts';
import { ProviderRateLimitedError, ProviderUnavailableError } from '../../lib/jobs/failures.ts';
import { chat, mockProvider, rejectionOf } from './helpers.ts';

const servers: MockAiServer[] = [];
async function start(options: Parameters<typeof startMockAiServer>[0] = {}) {
  const server = await startMockAiServer(options);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const complete = (server: MockAiServer, text: string, request = chat(text)) =>
  mockProvider('mock', server.url).complete({ ...request, model: 'mock-chat' }, { apiKey: 'k', signal: new AbortController().signal });

describe('the mock AI server', () => {
  it('answers 401 without a bearer key and 404 off the chat route', async () => {
    const server = await start();
    const post = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify({ model: 'm', messages: [] }) });
    expect((await post('/chat/completions')).status).toBe(401);
    expect((await post('/embeddings', { authorization: 'Bearer k' })).status).toBe(404);
    expect(server.requests).toHaveLength(0);
  });

  it('builds valid answers with the plugged respond function and records each request body', async () => {
    const server = await start({ respond: ({ model, jsonMode, messages }) => ({ model, jsonMode, turns: messages.length }) });
    const reply = await complete(server, 'Make three questions');
    expect(JSON.parse(reply.content)).toEqual({ model: 'mock-chat', jsonMode: true, turns: 2 });
    expect(server.requests).toEqual([expect.objectContaining({ model: 'mock-chat', messages: chat('Make three questions').messages })]);
  });

  it('fails the first call for a fail_once key, then succeeds, independently per key', async () => {
    const server = await start();
    expect(await rejectionOf(complete(server, 'q [scenario:fail_once:a]'))).toBeInstanceOf(ProviderUnavailableError);
    await expect(complete(server, 'q [scenario:fail_once:a]')).resolves.toHaveProperty('content');
    expect(await rejectionOf(complete(server, 'q [scenario:fail_once:b]'))).toBeInstanceOf(ProviderUnavailableError);
  });

  it('takes a default scenario, overridden per request by a marker', async () => {
    const server = await start({ scenario: 'server_error' });
    expect(await rejectionOf(complete(server, 'q'))).toBeInstanceOf(ProviderUnavailableError);
    await expect(complete(server, 'q [scenario:ok]')).resolves.toHaveProperty('content');
    server.setScenario(undefined);
    await expect(complete(server, 'q')).resolves.toHaveProperty('content');
  });

  it('answers 503 at the configured failure rate and waits the configured latency', async () => {
    const failing = await start({ failureRate: 1 });
    expect(await rejectionOf(complete(failing, 'q'))).toBeInstanceOf(ProviderUnavailableError);
    const slow = await start({ latencyMs: 150 });
    const started = Date.now();
    await complete(slow, 'q [sleep:100]');
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
  });

  it('acts on the markers the synthetic prompt renders', async () => {
    const server = await start();
    const prompt = getPrompt('synthetic', 'v1');
    const request = chat('');
    request.messages[1]!.content = prompt.render({ prompt: 'Hello there', scenario: 'rate_limit:4' });
    const err = await rejectionOf(complete(server, '', request));
    expect(err).toBeInstanceOf(ProviderRateLimitedError);
    expect(err).toMatchObject({ retryAfterMs: 4_000 });
    request.messages[1]!.content = prompt.render({ prompt: 'Hello there' });
    expect(JSON.parse((await complete(server, '', request)).content)).toMatchObject({ echo: 'Hello there' });
  });

  it('ends a hanging request when the server closes', async () => {
    const server = await startMockAiServer({ scenario: 'hang' });
    const pending = rejectionOf(complete(server, 'q'));
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    await server.close();
    expect(await pending).toBeInstanceOf(ProviderUnavailableError);
  });
});

describe('parseMarkers and mockAiServerOptionsFromEnv', () => {
  it('reads the last scenario and sleep markers of a text', () => {
    expect(parseMarkers('a [scenario:slow:20] b [sleep:5] [scenario:hang]')).toEqual({ scenario: 'hang', sleepMs: 5 });
    expect(parseMarkers('no markers [sleep:soon]')).toEqual({});
  });

  it('reads latency and failure rate for demos and rejects nonsense', () => {
    expect(mockAiServerOptionsFromEnv({ MOCK_AI_LATENCY_MS: '250', MOCK_AI_FAILURE_RATE: '0.1' })).toEqual({
      port: 0,
      latencyMs: 250,
      failureRate: 0.1,
    });
    expect(() => mockAiServerOptionsFromEnv({ MOCK_AI_FAILURE_RATE: '2' })).toThrow(ConfigurationError);
    expect(() => mockAiServerOptionsFromEnv({ MOCK_AI_LATENCY_MS: 'fast' })).toThrow(ConfigurationError);
  });
});
