import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generate } from '../../lib/ai/gateway.ts';
import { ModelRouter, UnknownModelTierError } from '../../lib/ai/model-router.ts';
import type { CredentialSet, ProviderCallRecord } from '../../lib/ai/types.ts';
import { startMockAiServer, type MockAiServer } from '../../lib/dev/mock-ai-server.ts';
import { CredentialInvalidError, ProviderRateLimitedError, ProviderUnavailableError } from '../../lib/jobs/failures.ts';
import { waitFor } from '../helpers/ports.ts';
import { chat, credentialsWith, mockProvider, rejectionOf } from './helpers.ts';

let primary: MockAiServer;
let secondary: MockAiServer;
let router: ModelRouter;
const bothKeys = credentialsWith({ primary: 'k1', secondary: 'k2' });

/** Runs `generate` on tier `fast` (primary, then secondary), collecting the call records. */
async function run(text: string, credentials: CredentialSet = bothKeys, signal = new AbortController().signal) {
  const records: ProviderCallRecord[] = [];
  const result = generate(chat(text), { tier: 'fast', credentials, signal, onCall: (r) => void records.push(r) }, { router });
  return { result, records };
}

beforeAll(async () => {
  [primary, secondary] = await Promise.all([startMockAiServer(), startMockAiServer()]);
  router = new ModelRouter(
    { fast: [{ provider: 'primary', model: 'm1' }, { provider: 'secondary', model: 'm2' }] },
    [mockProvider('primary', primary.url), mockProvider('secondary', secondary.url)],
  );
});
beforeEach(() => {
  primary.setScenario(undefined);
  secondary.setScenario(undefined);
  primary.requests.length = 0;
  secondary.requests.length = 0;
});
afterAll(async () => {
  await Promise.all([primary.close(), secondary.close()]);
});

describe('generate', () => {
  it('answers from the first route when it succeeds, reporting one call with usage', async () => {
    const { result, records } = await run('hello');
    const out = await result;
    expect(out.route).toEqual({ provider: 'primary', model: 'm1' });
    expect(JSON.parse(out.content)).toMatchObject({ echo: 'hello' });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ route: out.route, usage: out.usage });
    expect(records[0]!.errorCode).toBeUndefined();
    expect(secondary.requests).toHaveLength(0);
  });

  it('falls back to the next route when the first answers 500, and reports both calls', async () => {
    primary.setScenario('server_error');
    const { result, records } = await run('hello');
    const out = await result;
    expect(out.route).toEqual({ provider: 'secondary', model: 'm2' });
    expect(records.map((r) => [r.route.provider, r.errorCode])).toEqual([
      ['primary', 'PROVIDER_UNAVAILABLE'],
      ['secondary', undefined],
    ]);
    expect(records[0]!.usage.totalTokens).toBe(0);
    expect(records[1]!.usage.totalTokens).toBeGreaterThan(0);
    expect(records.every((r) => r.latencyMs >= 0)).toBe(true);
  });

  it('throws the last rate limit, with its wait, when every route is rate limited', async () => {
    primary.setScenario('rate_limit:5');
    secondary.setScenario('rate_limit:2');
    const { result, records } = await run('hello');
    const err = await rejectionOf(result);
    expect(err).toBeInstanceOf(ProviderRateLimitedError);
    expect(err).toMatchObject({ retryAfterMs: 2_000 });
    expect(records.map((r) => r.errorCode)).toEqual(['PROVIDER_RATE_LIMITED', 'PROVIDER_RATE_LIMITED']);
  });

  it('does not fall back when the provider refuses the credential', async () => {
    primary.setScenario('unauthorized');
    const { result, records } = await run('hello');
    expect(await rejectionOf(result)).toBeInstanceOf(CredentialInvalidError);
    expect(records).toHaveLength(1);
    expect(secondary.requests).toHaveLength(0);
  });

  it('skips routes the credential has no key for', async () => {
    primary.setScenario('server_error');
    const { result, records } = await run('hello', credentialsWith({ primary: 'k1' }));
    expect(await rejectionOf(result)).toBeInstanceOf(ProviderUnavailableError);
    expect(records).toHaveLength(1);
    expect(secondary.requests).toHaveLength(0);
  });

  it('refuses a credential that fits no route of the tier, and an unknown tier', async () => {
    const { result } = await run('hello', credentialsWith({ deepseek: 'user-key' }, 'user_deepseek_key'));
    expect(await rejectionOf(result)).toBeInstanceOf(CredentialInvalidError);
    const unknown = generate(chat('x'), { tier: 'galactic', credentials: bothKeys, signal: new AbortController().signal }, { router });
    expect(await rejectionOf(unknown)).toBeInstanceOf(UnknownModelTierError);
    expect(primary.requests).toHaveLength(0);
  });

  it('rethrows an abort at once, without falling back, and reports the aborted call', async () => {
    primary.setScenario('hang');
    const controller = new AbortController();
    const { result, records } = await run('hello', bothKeys, controller.signal);
    await waitFor(async () => primary.requests.length === 1, 'the hanging call', 2_000);
    controller.abort();
    const err = await rejectionOf(result);
    expect(err).toMatchObject({ name: 'AbortError' });
    expect(records).toEqual([expect.objectContaining({ errorCode: 'ABORTED', aborted: true })]);
    expect(secondary.requests).toHaveLength(0);
  });

  it('lets a failing usage write replace the outcome', async () => {
    const ledgerDown = new Error('ledger down');
    const onCall = () => Promise.reject(ledgerDown);
    const out = generate(chat('hello'), { tier: 'fast', credentials: bothKeys, signal: new AbortController().signal, onCall }, { router });
    expect(await rejectionOf(out)).toBe(ledgerDown);
  });
});

describe('generate, streaming', () => {
  /** A sink that records what it got and counts as shown from its `showAfter`-th write on. */
  function sinks(showAfter = Number.POSITIVE_INFINITY) {
    const opened: { route: string; text: string[]; shown: boolean }[] = [];
    const openSink = (route: { provider: string }) => {
      const sink = { route: route.provider, text: [] as string[], shown: false };
      opened.push(sink);
      return {
        write: (delta: string) => {
          sink.text.push(delta);
          if (sink.text.length >= showAfter) sink.shown = true;
        },
        get shown() {
          return sink.shown;
        },
      };
    };
    return { opened, openSink };
  }
  const streamed = (text: string, openSink: ReturnType<typeof sinks>['openSink'], extra: { firstTokenTimeoutMs?: number } = {}) => {
    const records: ProviderCallRecord[] = [];
    const result = generate(chat(text), { tier: 'fast', credentials: bothKeys, signal: new AbortController().signal, onCall: (r) => void records.push(r), openSink, ...extra }, { router });
    return { result, records };
  };

  it("gives each route's call its own sink and falls back while the failed call had shown nothing", async () => {
    primary.setScenario('rate_limit_mid:3');
    const { opened, openSink } = sinks();
    const { result, records } = streamed('hello', openSink);
    const out = await result;
    expect(out.route.provider).toBe('secondary');
    expect(opened.map((s) => [s.route, s.text.length])).toEqual([['primary', 3], ['secondary', expect.any(Number)]]);
    expect(opened[1]!.text.join('')).toBe(out.content);
    expect(records.map((r) => r.errorCode)).toEqual(['PROVIDER_RATE_LIMITED', undefined]);
  });

  it('does not fall back once the failed call had shown something: the failure ends the attempt', async () => {
    primary.setScenario('cut:5');
    const { opened, openSink } = sinks(2);
    const { result, records } = streamed('hello', openSink);
    expect(await rejectionOf(result)).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', fallbackEligible: true });
    expect(opened.map((s) => s.route)).toEqual(['primary']);
    expect(records).toHaveLength(1);
    expect(secondary.requests).toHaveLength(0);
  });

  it('passes the first-token deadline to every call and falls back from a provider that sends no token', async () => {
    primary.setScenario('hang');
    const { opened, openSink } = sinks();
    const { result, records } = streamed('hello', openSink, { firstTokenTimeoutMs: 300 });
    const out = await result;
    expect(out.route.provider).toBe('secondary');
    expect(records.map((r) => r.errorCode)).toEqual(['PROVIDER_TIMEOUT', undefined]);
    expect(opened[1]!.text.join('')).toBe(out.content);
  });
});
