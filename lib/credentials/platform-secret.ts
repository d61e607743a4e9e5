/**
 * The value type of the platform's provider keys and the parser of the Secrets Manager secret that holds
 * them (format documented in lib/credentials/platform-keys.ts).
 */
import { inspect } from 'node:util';
import { CredentialInvalidError } from '../jobs/failures.ts';

const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const KEY_VALUE = /^[\x21-\x7e]{1,512}$/;

/**
 * Provider name → API key, immutable. Its JSON and `util.inspect` forms show provider names only, so logging
 * it by mistake prints no key; read a key with {@link PlatformKeys.keyFor}.
 */
export class PlatformKeys {
  readonly #keys: ReadonlyMap<string, string>;

  constructor(entries: Iterable<readonly [string, string]>) {
    this.#keys = new Map(entries);
  }

  /** The key for `provider`, or undefined when the platform has none. */
  keyFor(provider: string): string | undefined {
    return this.#keys.get(provider);
  }

  /** The providers with a key, sorted. */
  get providers(): string[] {
    return [...this.#keys.keys()].sort();
  }

  toJSON(): { providers: string[] } {
    return { providers: this.providers };
  }

  [inspect.custom](): string {
    return `PlatformKeys { providers: [${this.providers.join(', ')}] }`;
  }
}

/**
 * The one entry of the secret's value when the stack created it (`{"unset":"<random>"}`): the stack generates
 * the value rather than writing one, so no deploy can ever reset keys an operator stored (infra/ai-jobs-stack.ts).
 * Parsing treats the secret as still having no provider keys.
 */
export const PLATFORM_SECRET_PLACEHOLDER_KEY = 'unset';

/**
 * Parses the secret's SecretString. Error messages name the secret and the rule, never a value, and carry no
 * `cause` (a JSON parser's message quotes the text it choked on).
 * @throws CredentialInvalidError when the secret is empty, not a JSON object, has no entry, names a provider
 *   badly, or holds a value that is not a key-shaped string.
 */
export function parsePlatformSecret(secretString: string | undefined, secretId = 'platform provider secret'): PlatformKeys {
  const invalid = (rule: string) => new CredentialInvalidError(`Platform provider secret ${secretId} ${rule}`);
  if (!secretString) throw invalid('has no SecretString');
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    throw invalid('is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('is not a JSON object');
  const entries = Object.entries(parsed).filter(([provider]) => provider !== PLATFORM_SECRET_PLACEHOLDER_KEY);
  if (entries.length === 0) throw invalid('has no provider keys');
  entries.forEach(([provider, key], index) => {
    if (!PROVIDER_NAME.test(provider)) throw invalid(`entry ${index + 1}: provider name is not [a-z][a-z0-9_-]{0,31}`);
    if (typeof key !== 'string' || !KEY_VALUE.test(key)) {
      throw invalid(`entry ${index + 1} (${provider}): the key is not a 1–512 character string without whitespace`);
    }
  });
  return new PlatformKeys(entries as [string, string][]);
}
