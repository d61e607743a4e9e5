import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrubSecret } from '../../lib/ai/openai-compatible-provider.ts';
import { retryAfterMsOf } from '../../lib/ai/provider-errors.ts';
import { startMockAiServer, type MockAiServer } from '../../lib/dev/mock-ai-server.ts';
import {
  CredentialInvalidError,
  ProviderRateLimitedError,
  ProviderTimeoutError,
  ProviderUnavailableError,
} from '../../lib/jobs/failures.ts';
import { freePort, waitFor } from '../helpers/ports.ts';
import { chat, mockProvider, rejectionOf } from './helpers.ts';

let server: MockAiServer;
const call = (text: string, opts: { timeoutMs?: number; apiKey?: string; signal?: AbortSignal; url?: string } = {}) =>
  mockProvider('mock', opts.url ?? server.url, opts.timeoutMs).complete(
    { ...chat(text), model: 'mock-chat' },
    { apiKey: opts.apiKey ?? 'test-key', signal: opts.signal ?? new AbortController().signal },
  );

beforeAll(async () => {
  server = await startMockAiServer({ apiKey: 'test-key' });
});
afterAll(async () => {
  await server.close();
});

describe('OpenAiCompatibleProvider', () => {
  it('returns the content and reported usage of a valid answer, asking for JSON mode', async () => {
    const reply = await call('What is two plus two?');
    expect(JSON.parse(reply.content)).toMatchObject({ echo: 'What is two plus two?' });
    expect(reply.usage.promptTokens).toBeGreaterThan(0);
    expect(reply.usage.completionTokens).toBeGreaterThan(0);
    expect(reply.usage.totalTokens).toBe(reply.usage.promptTokens + reply.usage.completionTokens);
    expect(server.requests.at(-1)).toMatchObject({ model: 'mock-chat', response_format: { type: 'json_object' } });
  });

  it('reports zero usage when the provider sends none', async () => {
    const reply = await call('hello [scenario:no_usage]');
    expect(reply.usage).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
  });

  it('hands invalid and schema-violating JSON back as content, for the engine to validate', async () => {
    const invalid = await call('[scenario:invalid_json]');
    expect(() => JSON.parse(invalid.content)).toThrow(SyntaxError);
    const violating = await call('[scenario:schema_violation]');
    expect(JSON.parse(violating.content)).not.toHaveProperty('echo');
  });

  it('maps a 429 to ProviderRateLimitedError carrying the Retry-After wait', async () => {
    const err = await rejectionOf(call('[scenario:rate_limit:3]'));
    expect(err).toBeInstanceOf(ProviderRateLimitedError);
    expect(err).toMatchObject({ retryAfterMs: 3_000, retryable: true, fallbackEligible: true });
  });

  it('maps a 500 to ProviderUnavailableError', async () => {
    const err = await rejectionOf(call('[scenario:server_error]'));
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as Error).message).toContain('HTTP 500');
  });

  it('maps a refused connection to ProviderUnavailableError', async () => {
    const closedPort = await freePort();
    const err = await rejectionOf(call('hello', { url: `http://127.0.0.1:${closedPort}/v1` }));
    expect(err).toBeInstanceOf(ProviderUnavailableError);
  });

  it('maps 401 (a refused or missing key) to CredentialInvalidError, which does not fall back', async () => {
    const refused = await rejectionOf(call('hello', { apiKey: 'wrong-key' }));
    expect(refused).toBeInstanceOf(CredentialInvalidError);
    expect(refused).toMatchObject({ fallbackEligible: false, retryable: false });
    expect(await rejectionOf(call('[scenario:unauthorized]'))).toBeInstanceOf(CredentialInvalidError);
    expect(await rejectionOf(call('hello', { apiKey: '' }))).toBeInstanceOf(CredentialInvalidError);
  });

  it('keeps a refused key out of the failure when the vendor quotes it back', async () => {
    const key = 'wrong-key-quoted-back-0042';
    const refused = await rejectionOf(call('hello', { apiKey: key }));
    expect(refused).toBeInstanceOf(CredentialInvalidError);
    const cause = (refused as Error).cause as Error;
    expect(cause.message).toContain('Incorrect API key provided: [REDACTED]');
    const chain = [refused as Error, cause].flatMap((e) => [e.message, e.stack ?? '']).join('\n');
    expect(chain).not.toContain(key);
  });

  it('scrubs the key along the cause chain, DOMException messages (getter only) included, and leaves short keys alone', () => {
    const key = 'key-0123456789abcdef';
    const err = new Error(`outer ${key}`, { cause: new DOMException(`aborted for ${key}`, 'AbortError') });
    expect(scrubSecret(err, key)).toBe(err);
    expect([err.message, (err.cause as Error).message]).toEqual(['outer [REDACTED]', 'aborted for [REDACTED]']);
    expect(`${err.stack}${(err.cause as Error).stack}`).not.toContain(key);
    const short = new Error('short abc in text');
    expect((scrubSecret(short, 'abc') as Error).message).toBe('short abc in text');
  });

  it('keeps one SDK client per key on one provider: each call still goes out with its own key', async () => {
    const provider = mockProvider('mock', server.url);
    const ask = (apiKey: string) => provider.complete({ ...chat('hello'), model: 'mock-chat' }, { apiKey, signal: new AbortController().signal });
    for (let i = 0; i < 3; i += 1) {
      await expect(ask('test-key')).resolves.toMatchObject({ content: expect.any(String) });
      expect(await rejectionOf(ask('wrong-key'))).toBeInstanceOf(CredentialInvalidError);
    }
    // More keys than the provider keeps clients for: the oldest are dropped, a dropped key still works.
    for (let i = 0; i < 70; i += 1) expect(await rejectionOf(ask(`other-key-${i}`))).toBeInstanceOf(CredentialInvalidError);
    await expect(ask('test-key')).resolves.toMatchObject({ content: expect.any(String) });
  });

  it('maps an answer slower than its own timeout to ProviderTimeoutError', async () => {
    const err = await rejectionOf(call('[scenario:slow:3000]', { timeoutMs: 200 }));
    expect(err).toBeInstanceOf(ProviderTimeoutError);
  });

  it("rethrows the caller's abort mid-hang promptly, and the server sees the disconnect", async () => {
    const before = server.disconnects;
    const controller = new AbortController();
    const started = Date.now();
    const pending = rejectionOf(call('[scenario:hang]', { signal: controller.signal, timeoutMs: 30_000 }));
    await waitFor(async () => server.requests.some((r) => JSON.stringify(r.messages).includes('[scenario:hang]')), 'the hang request', 2_000);
    controller.abort();
    const err = await pending;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toBeInstanceOf(DOMException);
    expect(err).toMatchObject({ name: 'AbortError' });
    await waitFor(async () => server.disconnects > before, 'the server to see the disconnect', 2_000);
  });

  it('rethrows the reason of a signal that aborted before the call, without calling', async () => {
    const count = server.requests.length;
    const reason = new Error('cancelled by the engine');
    expect(await rejectionOf(call('hello', { signal: AbortSignal.abort(reason) }))).toBe(reason);
    expect(server.requests).toHaveLength(count);
  });
});

describe('retryAfterMsOf', () => {
  const headers = (h: Record<string, string>) => new Headers(h);

  it('reads delta-seconds, an HTTP-date, and OpenAI retry-after-ms', () => {
    const now = Date.parse('2026-11-02T10:00:00Z');
    expect(retryAfterMsOf(headers({ 'retry-after': '7' }), now)).toBe(7_000);
    expect(retryAfterMsOf(headers({ 'retry-after': 'Mon, 02 Nov 2026 10:00:30 GMT' }), now)).toBe(30_000);
    expect(retryAfterMsOf(headers({ 'retry-after-ms': '250', 'retry-after': '7' }), now)).toBe(250);
  });

  it('ignores absent or unparsable values and clamps past dates and huge waits', () => {
    const now = Date.parse('2026-11-02T10:00:00Z');
    expect(retryAfterMsOf(undefined)).toBeUndefined();
    expect(retryAfterMsOf(headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMsOf(headers({ 'retry-after': 'Mon, 02 Nov 2026 09:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterMsOf(headers({ 'retry-after': '86400' }), now)).toBe(15 * 60_000);
  });
});
