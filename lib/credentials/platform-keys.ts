/**
 * The platform's own provider keys (`platform_key` mode).
 *
 * Deployed: ONE Secrets Manager secret, named (or ARN'd) by `PLATFORM_PROVIDER_SECRET_ID`, whose SecretString
 * is a JSON object from provider name to API key:
 *
 *     { "deepseek": "sk-…", "openai-compat": "…" }
 *
 * Provider names are lower-case (`[a-z][a-z0-9_-]*`, ≤ 32) and match the router's `ModelRoute.provider`;
 * values are non-empty strings without whitespace. Rotate by writing a new version of the secret: every
 * container picks it up within the cache TTL (5 minutes by default).
 *
 * Local development (no `PLATFORM_PROVIDER_SECRET_ID`): keys come from the environment, `DEEPSEEK_API_KEY`
 * → `deepseek` and `OPENAI_COMPAT_API_KEY` → `openai-compat`, and the mock provider always gets the dummy
 * key `mock-key` (so the mock server can check that a key is sent). With a secret, the mock provider has a key
 * only if the secret lists `mock`.
 *
 * Keys are held in a {@link PlatformKeys} whose JSON and `util.inspect` forms list provider names only, so a
 * stray log line cannot print them.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CredentialSet } from '../ai/types.ts';
import { CredentialInvalidError } from '../jobs/failures.ts';
import { getSecretsManagerClient, isTransientAwsError } from './aws-clients.ts';
import { CredentialServiceUnavailableError } from './errors.ts';
import { parsePlatformSecret, PlatformKeys } from './platform-secret.ts';

export { PlatformKeys, parsePlatformSecret };

type Env = Readonly<Record<string, string | undefined>>;

/** Environment variable naming the secret. */
export const PLATFORM_SECRET_ID_ENV = 'PLATFORM_PROVIDER_SECRET_ID';
/** Local development: environment variable holding each provider's key. */
export const PLATFORM_KEY_ENV: Readonly<Record<string, string>> = {
  deepseek: 'DEEPSEEK_API_KEY',
  'openai-compat': 'OPENAI_COMPAT_API_KEY',
};
/** The mock provider's name (`ModelRoute.provider`); it gets {@link MOCK_PROVIDER_KEY} outside of Secrets Manager. */
export const MOCK_PROVIDER = 'mock';
/** The mock provider's fixed key outside of Secrets Manager. */
export const MOCK_PROVIDER_KEY = 'mock-key';
/** How long a fetched secret is used before it is fetched again. */
export const DEFAULT_PLATFORM_KEYS_TTL_MS = 5 * 60_000;
/** After a failed refresh with a warm cache, how long the old keys are served before the next try. */
export const DEFAULT_REFRESH_RETRY_MS = 30_000;

/** Where warnings go (a failed refresh served from cache); Powertools' Logger fits. Never given a key. */
export interface CredentialsLogger {
  warn(message: string, ...attributes: LogAttributes[]): void;
}

/** How a {@link PlatformKeyCache} finds its keys; every field has a production default. */
export interface PlatformKeySourceOptions {
  /** Secret name or ARN; when absent, keys come from `env` (local development). */
  secretId?: string;
  /** Defaults to the process-wide client. */
  secretsManager?: SecretsManagerClient;
  env?: Env;
  ttlMs?: number;
  refreshRetryMs?: number;
  /** Clock in epoch milliseconds; tests move it past the TTL. */
  now?: () => number;
  logger?: CredentialsLogger;
}

/**
 * A per-container cache of the platform keys. Invariants: at most one Secrets Manager request in flight
 * (concurrent callers share it); a fresh value is served without a request until its TTL passes; once a value
 * was loaded, a failed refresh serves the old value (and logs a warning) rather than failing jobs.
 */
export class PlatformKeyCache {
  readonly #options: Required<Omit<PlatformKeySourceOptions, 'secretId' | 'secretsManager'>> & { secretId?: string };
  readonly #client: () => SecretsManagerClient;
  #entry: { keys: PlatformKeys; expiresAt: number } | undefined;
  #inflight: Promise<PlatformKeys> | undefined;
  #envKeys: PlatformKeys | undefined;

  constructor(options: PlatformKeySourceOptions = {}) {
    this.#options = {
      secretId: options.secretId?.trim() || undefined,
      env: options.env ?? process.env,
      ttlMs: options.ttlMs ?? DEFAULT_PLATFORM_KEYS_TTL_MS,
      refreshRetryMs: options.refreshRetryMs ?? DEFAULT_REFRESH_RETRY_MS,
      now: options.now ?? Date.now,
      logger: options.logger ?? new Logger({ serviceName: 'credentials' }),
    };
    const client = options.secretsManager;
    this.#client = client ? () => client : getSecretsManagerClient;
  }

  /**
   * The current keys.
   * @throws CredentialInvalidError when the secret is missing, unreadable or malformed and nothing is cached.
   * @throws CredentialServiceUnavailableError when Secrets Manager cannot be reached and nothing is cached.
   */
  async get(): Promise<PlatformKeys> {
    const { secretId } = this.#options;
    if (secretId === undefined) {
      this.#envKeys ??= platformKeysFromEnv(this.#options.env);
      return this.#envKeys;
    }
    const entry = this.#entry;
    if (entry && this.#options.now() < entry.expiresAt) return entry.keys;
    this.#inflight ??= this.#refresh(secretId).finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  async #refresh(secretId: string): Promise<PlatformKeys> {
    try {
      const keys = await fetchPlatformKeys(this.#client(), secretId);
      this.#entry = { keys, expiresAt: this.#options.now() + this.#options.ttlMs };
      return keys;
    } catch (err) {
      const stale = this.#entry;
      if (!stale) throw err;
      this.#entry = { keys: stale.keys, expiresAt: this.#options.now() + this.#options.refreshRetryMs };
      this.#options.logger.warn('platform provider keys could not be refreshed; serving the cached keys', {
        secretId,
        error: err instanceof Error ? `${err.name}: ${err.message}` : typeof err,
      });
      return stale.keys;
    }
  }
}

/**
 * One read of the secret.
 * @throws CredentialInvalidError (missing, access denied, malformed) | CredentialServiceUnavailableError.
 */
export async function fetchPlatformKeys(client: SecretsManagerClient, secretId: string): Promise<PlatformKeys> {
  const out = await client.send(new GetSecretValueCommand({ SecretId: secretId })).catch((err: unknown) => {
    const name = err instanceof Error ? err.name : typeof err;
    throw isTransientAwsError(err)
      ? new CredentialServiceUnavailableError(`Secrets Manager GetSecretValue ${secretId} failed: ${name}`, { cause: err })
      : new CredentialInvalidError(`Platform provider secret ${secretId} could not be read: ${name}`, { cause: err });
  });
  return parsePlatformSecret(out.SecretString, secretId);
}

/** Local development keys: the `PLATFORM_KEY_ENV` variables that are set, plus the mock provider's dummy key. */
export function platformKeysFromEnv(env: Env = process.env): PlatformKeys {
  const entries: [string, string][] = [[MOCK_PROVIDER, MOCK_PROVIDER_KEY]];
  for (const [provider, variable] of Object.entries(PLATFORM_KEY_ENV)) {
    const key = env[variable]?.trim();
    if (key) entries.push([provider, key]);
  }
  return new PlatformKeys(entries);
}

let shared: PlatformKeyCache | undefined;

/** The process-wide platform keys, from `PLATFORM_PROVIDER_SECRET_ID` (or the environment); see the module comment. */
export async function loadPlatformKeys(): Promise<PlatformKeys> {
  shared ??= new PlatformKeyCache({ secretId: process.env[PLATFORM_SECRET_ID_ENV] });
  return shared.get();
}

/** The credential set of a `platform_key` job: `keyFor(provider)` is the platform's key, or undefined. */
export function platformCredentialSet(keys: PlatformKeys): CredentialSet {
  return { mode: 'platform_key', keyFor: (provider) => keys.keyFor(provider) };
}
