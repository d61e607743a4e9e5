/** The mock provider enforces RPM/TPM like a provider: 429 with Retry-After until its minute window ends. */
import { afterEach, describe, expect, it } from 'vitest';
import { mockAiServerOptionsFromEnv, startMockAiServer, type MockAiServer } from '../../lib/dev/mock-ai-server.ts';
import { MockRateLimiter } from '../../lib/dev/mock-rate-limit.ts';
import { ConfigurationError } from '../../lib/config/aws.ts';
import { ProviderRateLimitedError } from '../../lib/jobs/failures.ts';
import { chat, mockProvider, rejectionOf } from './helpers.ts';

const servers: MockAiServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const message = (chars: number) => ({ messages: [{ role: 'user' as const, content: 'x'.repeat(chars) }] });

describe('MockRateLimiter', () => {
  it('admits RPM requests per minute window, then says how long until the window ends', () => {
    let now = Date.parse('2026-12-06T10:15:40.200Z');
    const limiter = new MockRateLimiter({ rpm: 3 }, () => now);
    for (let i = 0; i < 3; i += 1) expect(limiter.admit(message(4))).toEqual({ admitted: true });
    expect(limiter.admit(message(4))).toEqual({ admitted: false, retryAfterSeconds: 20 });
    now = Date.parse('2026-12-06T10:16:00.000Z');
    expect(limiter.admit(message(4))).toEqual({ admitted: true });
  });

  it('counts tokens as a provider admits them: the prompt plus max_tokens', () => {
    const now = Date.parse('2026-12-06T10:15:59.000Z');
    const limiter = new MockRateLimiter({ tpm: 1_000 }, () => now);
    expect(limiter.admit({ ...message(400), max_tokens: 800 })).toEqual({ admitted: true }); // 100 + 800
    expect(limiter.admit({ ...message(400), max_tokens: 1 })).toEqual({ admitted: false, retryAfterSeconds: 1 });
    expect(limiter.admit({ ...message(4), max_tokens: 99 })).toEqual({ admitted: true }); // exactly 1,000
  });
});

describe('the mock server with rate limits', () => {
  it('answers 429 with Retry-After over its RPM, which the provider client reads', async () => {
    const server = await startMockAiServer({ rateLimits: { rpm: 2 } });
    servers.push(server);
    const complete = () => mockProvider('mock', server.url).complete({ ...chat('hi'), model: 'mock-chat' }, { apiKey: 'k', signal: new AbortController().signal });
    await complete();
    await complete();
    const err = await rejectionOf(complete());
    expect(err).toBeInstanceOf(ProviderRateLimitedError);
    expect((err as ProviderRateLimitedError).retryAfterMs).toBeGreaterThan(0);
    expect((err as ProviderRateLimitedError).retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('takes MOCK_AI_RPM and MOCK_AI_TPM from the environment, and refuses nonsense', () => {
    expect(mockAiServerOptionsFromEnv({ MOCK_AI_RPM: '30', MOCK_AI_TPM: '5000' }).rateLimits).toEqual({ rpm: 30, tpm: 5_000 });
    expect(mockAiServerOptionsFromEnv({}).rateLimits).toBeUndefined();
    for (const bad of ['0', '-1', 'many', '2.5']) expect(() => mockAiServerOptionsFromEnv({ MOCK_AI_RPM: bad })).toThrow(ConfigurationError);
  });
});
