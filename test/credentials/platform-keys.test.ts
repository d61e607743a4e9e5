import { inspect } from 'node:util';
import { DeleteSecretCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { createSecretsManagerClient } from '../../lib/credentials/aws-clients.ts';
import { CredentialServiceUnavailableError } from '../../lib/credentials/errors.ts';
import {
  MOCK_PROVIDER_KEY, PlatformKeyCache, platformCredentialSet, platformKeysFromEnv, type PlatformKeySourceOptions,
} from '../../lib/credentials/platform-keys.ts';
import { CredentialInvalidError } from '../../lib/jobs/failures.ts';
import { createTestSecret, deadEndpointEnv, expectNoSecretIn, fakeDeepseekKey, rejectionOf, uniqueName } from './fixtures.ts';

/** A cache on its own Secrets Manager client whose secret reads are counted, with a clock the test moves. */
function testCache(secretId: string, options: Partial<PlatformKeySourceOptions> = {}) {
  const secretsManager = createSecretsManagerClient();
  const requests = { count: 0 };
  secretsManager.middlewareStack.add((next, context) => async (args) => {
    if (context.commandName === 'GetSecretValueCommand') requests.count++;
    return next(args);
  }, { step: 'initialize', name: 'countSecretReads' });
  const clock = { now: 1_000_000 };
  const warnings: unknown[][] = [];
  const cache = new PlatformKeyCache({
    secretId, secretsManager, ttlMs: 60_000, refreshRetryMs: 5_000, now: () => clock.now,
    logger: { warn: (...args: unknown[]) => warnings.push(args) },
    ...options,
  });
  return { cache, requests, clock, warnings, secretsManager };
}

describe('platform keys from Secrets Manager', () => {
  it('reads every provider key from the one secret', async () => {
    const deepseek = fakeDeepseekKey();
    const { cache } = testCache(await createTestSecret({ deepseek, 'openai-compat': 'oc-0123456789abcdef' }));
    const keys = await cache.get();
    expect(keys.keyFor('deepseek')).toBe(deepseek);
    expect(keys.keyFor('openai-compat')).toBe('oc-0123456789abcdef');
    expect(keys.keyFor('mock')).toBeUndefined();
    expect(keys.providers).toEqual(['deepseek', 'openai-compat']);
  });

  it('serves a second call from the cache without a request', async () => {
    const { cache, requests } = testCache(await createTestSecret({ deepseek: fakeDeepseekKey() }));
    await cache.get();
    await cache.get();
    expect(requests.count).toBe(1);
  });

  it('fetches again after the TTL and picks up a rotated key', async () => {
    const secretId = await createTestSecret({ deepseek: fakeDeepseekKey() });
    const { cache, requests, clock, secretsManager } = testCache(secretId);
    await cache.get();
    const rotated = fakeDeepseekKey();
    await secretsManager.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: JSON.stringify({ deepseek: rotated }) }));
    clock.now += 59_999;
    expect((await cache.get()).keyFor('deepseek')).not.toBe(rotated);
    clock.now += 1;
    expect((await cache.get()).keyFor('deepseek')).toBe(rotated);
    expect(requests.count).toBe(2);
  });

  it('lets concurrent callers share one fetch', async () => {
    const { cache, requests } = testCache(await createTestSecret({ deepseek: fakeDeepseekKey() }));
    const all = await Promise.all(Array.from({ length: 20 }, () => cache.get()));
    expect(requests.count).toBe(1);
    expect(new Set(all).size).toBe(1);
  });

  it('keeps serving the cached keys when a refresh fails, and retries after a pause', async () => {
    const deepseek = fakeDeepseekKey();
    const secretId = await createTestSecret({ deepseek });
    const { cache, requests, clock, warnings, secretsManager } = testCache(secretId);
    await cache.get();
    await secretsManager.send(new DeleteSecretCommand({ SecretId: secretId, ForceDeleteWithoutRecovery: true }));
    clock.now += 60_000;
    expect((await cache.get()).keyFor('deepseek')).toBe(deepseek);
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toContain(deepseek);
    expect((await cache.get()).keyFor('deepseek')).toBe(deepseek);
    expect(requests.count).toBe(2);
    clock.now += 5_000;
    await cache.get();
    expect(requests.count).toBe(3);
  });

  it('fails a cold cache with CredentialInvalidError when the secret does not exist', async () => {
    const { cache } = testCache(uniqueName('no-such-secret'));
    const err = await rejectionOf(cache.get());
    expect(err).toBeInstanceOf(CredentialInvalidError);
    expect((err as CredentialInvalidError).retryable).toBe(false);
    expect((err as Error).message).toContain('ResourceNotFoundException');
  });

  it.each([
    ['not JSON', (key: string) => `deepseek=${key}`],
    ['a JSON array', (key: string) => JSON.stringify([key])],
    ['an empty object', () => '{}'],
    ['a non-string value', (key: string) => JSON.stringify({ deepseek: { key } })],
    ['a value with whitespace', (key: string) => JSON.stringify({ deepseek: ` ${key}` })],
    ['a key used as a provider name', (key: string) => JSON.stringify({ [key]: 'deepseek' })],
  ])('refuses a secret that is %s, without quoting it', async (_, secretOf) => {
    const key = fakeDeepseekKey();
    const { cache } = testCache(await createTestSecret(secretOf(key)));
    const err = await rejectionOf(cache.get());
    expect(err).toBeInstanceOf(CredentialInvalidError);
    expectNoSecretIn(err, key);
  });

  it('reports an unreachable Secrets Manager as retryable', async () => {
    const secretsManager = createSecretsManagerClient(await deadEndpointEnv(), { maxAttempts: 1 });
    const cache = new PlatformKeyCache({ secretId: 'any', secretsManager });
    const err = await rejectionOf(cache.get());
    expect(err).toBeInstanceOf(CredentialServiceUnavailableError);
    expect((err as CredentialServiceUnavailableError).retryable).toBe(true);
  });

  it('never prints key values when the keys object is logged', async () => {
    const deepseek = fakeDeepseekKey();
    const { cache } = testCache(await createTestSecret({ deepseek }));
    const keys = await cache.get();
    for (const form of [JSON.stringify(keys), inspect(keys, { depth: 10, showHidden: true }), String(keys), `${inspect({ keys })}`]) {
      expect(form).not.toContain(deepseek);
    }
    expect(JSON.parse(JSON.stringify(keys))).toEqual({ providers: ['deepseek'] });
  });
});

describe('platform keys without a secret (local development)', () => {
  it('takes keys from the environment and gives the mock provider its dummy key', async () => {
    const env = { DEEPSEEK_API_KEY: 'sk-env-deepseek-0123456789', OPENAI_COMPAT_API_KEY: 'oc-env-0123456789' };
    const keys = await new PlatformKeyCache({ env }).get();
    expect(keys.keyFor('deepseek')).toBe(env.DEEPSEEK_API_KEY);
    expect(keys.keyFor('openai-compat')).toBe(env.OPENAI_COMPAT_API_KEY);
    expect(keys.keyFor('mock')).toBe(MOCK_PROVIDER_KEY);
  });

  it('leaves providers without a variable keyless, so the router skips them', async () => {
    const keys = await new PlatformKeyCache({ secretId: '  ', env: {} }).get();
    expect(keys.providers).toEqual(['mock']);
    expect(keys.keyFor('deepseek')).toBeUndefined();
  });

  it('builds a platform_key credential set that answers per provider', () => {
    const set = platformCredentialSet(platformKeysFromEnv({ DEEPSEEK_API_KEY: 'sk-env-deepseek-0123456789' }));
    expect(set.mode).toBe('platform_key');
    expect(set.credentialId).toBeUndefined();
    expect(set.keyFor('deepseek')).toBe('sk-env-deepseek-0123456789');
    expect(set.keyFor('mock')).toBe('mock-key');
    expect(set.keyFor('unknown')).toBeUndefined();
    expect(set.keyFor('constructor')).toBeUndefined();
  });
});
