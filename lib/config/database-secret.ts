/**
 * DATABASE_URL for deployed Lambdas. The stack gives each function the database secret's ARN instead of a URL
 * (a URL with the password would sit in plain text in the function's configuration):
 *
 * - `DATABASE_SECRET_ARN`: the Secrets Manager secret RDS generated for the cluster; its SecretString is JSON
 *   with `username`, `password`, `host`, `port` and `dbname`;
 * - `DATABASE_HOST` (optional): overrides the secret's host, e.g. with the RDS Proxy endpoint;
 * - `DATABASE_NAME` (optional): overrides the secret's `dbname`;
 * - `DATABASE_TLS=true` (optional): adds `ssl=true` to the URL (the proxy requires TLS);
 * - `DATABASE_CONNECTION_LIMIT` (optional): the pool size per container.
 *
 * {@link ensureDatabaseUrl} fetches the secret once per container, before the first database client is made,
 * and sets `DATABASE_URL`; with DATABASE_URL already set (local runs, tests) it does nothing.
 * {@link refreshDatabaseUrl} reads the secret again (the secret rotates: the database refused the password a
 * container read earlier; lib/db/credential-rotation.ts decides when). User and password never appear in an
 * error or a log line.
 */
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { createSecretsManagerClient, isTransientAwsError } from '../credentials/aws-clients.ts';
import { EngineError } from '../errors.ts';

type Env = Record<string, string | undefined>;

/** Tries of the database secret's fetch (the SDK's standard retry between them). */
const SECRET_FETCH_ATTEMPTS = 2;

/** Environment variable naming the database secret. */
export const DATABASE_SECRET_ARN_ENV = 'DATABASE_SECRET_ARN';

/** Neither DATABASE_URL nor DATABASE_SECRET_ARN is set, or the secret is not a usable RDS secret. */
export class DatabaseSecretError extends EngineError {
  readonly code = 'DATABASE_SECRET_INVALID';
}

/**
 * Secrets Manager could not be asked for the database secret (unreachable, throttled, or failing on its side):
 * the database is unavailable for now; another try may succeed. The API answers 503 with Retry-After
 * (lib/db/connection-errors.ts counts this code among "unavailable").
 */
export class DatabaseSecretUnavailableError extends EngineError {
  readonly code = 'DATABASE_SECRET_UNAVAILABLE';
  override readonly retryable = true;
}

/** The fields of an RDS-generated secret this module reads. */
interface RdsSecret {
  username: string;
  password: string;
  host?: string;
  port?: number | string;
  dbname?: string;
}

const pending = new WeakMap<Env, Promise<void>>();

/**
 * Makes sure `env.DATABASE_URL` is set (see the module comment). Concurrent and repeated calls share one fetch;
 * a failed fetch is forgotten, so the next invocation tries again.
 * @throws DatabaseSecretError when no source is configured or the secret lacks a field.
 */
export function ensureDatabaseUrl(env: Env = process.env): Promise<void> {
  if (env.DATABASE_URL?.trim()) return Promise.resolve();
  let promise = pending.get(env);
  if (!promise) {
    promise = resolveDatabaseUrl(env).catch((err: unknown) => {
      pending.delete(env);
      throw err;
    });
    pending.set(env, promise);
  }
  return promise;
}

const refreshing = new WeakMap<Env, Promise<boolean>>();

/**
 * Reads the secret again and sets `env.DATABASE_URL` from it; resolves whether the URL changed. Concurrent calls
 * share one read. Without {@link DATABASE_SECRET_ARN_ENV} (a URL given directly) there is nothing to re-read:
 * false.
 * @throws DatabaseSecretUnavailableError / DatabaseSecretError as {@link ensureDatabaseUrl}
 */
export function refreshDatabaseUrl(env: Env = process.env): Promise<boolean> {
  if (!env[DATABASE_SECRET_ARN_ENV]?.trim()) return Promise.resolve(false);
  let promise = refreshing.get(env);
  if (!promise) {
    const before = env.DATABASE_URL;
    promise = resolveDatabaseUrl(env).then(() => env.DATABASE_URL !== before).finally(() => refreshing.delete(env));
    refreshing.set(env, promise);
  }
  return promise;
}

async function resolveDatabaseUrl(env: Env): Promise<void> {
  const secretId = env[DATABASE_SECRET_ARN_ENV]?.trim();
  if (!secretId) throw new DatabaseSecretError('neither DATABASE_URL nor DATABASE_SECRET_ARN is set');
  // Bounded: 2 tries of at most 1 s to connect and 3 s to answer, so a Secrets Manager that hangs (a dropped
  // VPC endpoint) is an answer well inside the API functions' 15 s, not their timeout. (`throwOnRequestTimeout`:
  // without it @smithy/node-http-handler 4 only logs a warning when `requestTimeout` passes, and waits on.)
  const client = createSecretsManagerClient(env, { maxAttempts: SECRET_FETCH_ATTEMPTS, requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000, throwOnRequestTimeout: true } });
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId })).catch((err: unknown) => {
      // A refusal (no such secret, access denied) is a configuration error and stays as it is.
      throw isTransientAwsError(err) ? new DatabaseSecretUnavailableError(`Secrets Manager did not give the database secret: ${(err as Error).name}`, { cause: err }) : err;
    });
    env.DATABASE_URL = databaseUrlFromSecret(SecretString, env);
  } finally {
    client.destroy();
  }
}

/**
 * The `mysql://` URL for an RDS secret's SecretString, with the environment's overrides applied. User,
 * password and database name are URL-encoded.
 * @throws DatabaseSecretError naming the missing field (never a value).
 */
export function databaseUrlFromSecret(secretString: string | undefined, env: Env = {}): string {
  const secret = parseSecret(secretString);
  const host = env.DATABASE_HOST?.trim() || secret.host;
  const database = env.DATABASE_NAME?.trim() || secret.dbname;
  if (!host) throw new DatabaseSecretError('the database secret has no host and DATABASE_HOST is not set');
  if (!database) throw new DatabaseSecretError('the database secret has no dbname and DATABASE_NAME is not set');
  const port = Number(secret.port ?? 3306);
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) throw new DatabaseSecretError('the database secret has an invalid port');
  const url = new URL(`mysql://${hostForUrl(host)}:${port}/${encodeURIComponent(database)}`);
  url.username = encodeURIComponent(secret.username);
  url.password = encodeURIComponent(secret.password);
  if (env.DATABASE_TLS?.trim() === 'true') url.searchParams.set('ssl', 'true');
  const limit = env.DATABASE_CONNECTION_LIMIT?.trim();
  if (limit) url.searchParams.set('connectionLimit', limit);
  return url.toString();
}

function parseSecret(secretString: string | undefined): RdsSecret {
  let value: unknown;
  try {
    value = JSON.parse(secretString ?? '');
  } catch {
    // No `cause`: a JSON parser's message may quote the secret.
    throw new DatabaseSecretError('the database secret is not JSON');
  }
  const secret = (typeof value === 'object' && value !== null ? value : {}) as Partial<RdsSecret>;
  for (const field of ['username', 'password'] as const) {
    if (typeof secret[field] !== 'string' || secret[field] === '') {
      throw new DatabaseSecretError(`the database secret has no ${field}`);
    }
  }
  return secret as RdsSecret;
}

/** IPv6 literals need brackets in a URL. */
function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
