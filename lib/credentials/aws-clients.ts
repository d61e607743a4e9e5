/**
 * The KMS and Secrets Manager clients of the credentials capability. Each gets an explicit endpoint when one
 * is configured — `AWS_ENDPOINT_URL_KMS` / `AWS_ENDPOINT_URL_SECRETS_MANAGER` first, then `AWS_ENDPOINT_URL`
 * for all services — so the same code runs against moto or LocalStack; on AWS none is set and the SDK picks
 * the regional endpoint. Region: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`.
 *
 * Production code uses the lazily created per-container singletons; tests build their own with the
 * factories (e.g. to count requests with a middleware).
 */
import { KMSClient } from '@aws-sdk/client-kms';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { KeyObjectSha256 } from '../config/sha256.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** Services whose endpoint can be overridden, named as in the SDK's `AWS_ENDPOINT_URL_<SERVICE>` variables. */
export type CredentialService = 'KMS' | 'SECRETS_MANAGER';

/** Options a caller may override on a client (e.g. fewer retries in a test of failure handling). */
export interface ClientOverrides {
  maxAttempts?: number;
  /** Socket timeouts in ms (the SDK sets none by default: a service that accepts and never answers hangs the call). */
  requestHandler?: { connectionTimeout?: number; requestTimeout?: number; throwOnRequestTimeout?: boolean };
}

/** The endpoint override for `service`: its own variable, then `AWS_ENDPOINT_URL`; undefined on AWS. */
export function credentialServiceEndpoint(service: CredentialService, env: Env = process.env): string | undefined {
  return env[`AWS_ENDPOINT_URL_${service}`]?.trim() || env.AWS_ENDPOINT_URL?.trim() || undefined;
}

function region(env: Env): string {
  return env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || 'us-east-1';
}

/** A new KMS client for this environment. */
export function createKmsClient(env: Env = process.env, overrides: ClientOverrides = {}): KMSClient {
  return new KMSClient({ region: region(env), endpoint: credentialServiceEndpoint('KMS', env), sha256: KeyObjectSha256, ...overrides });
}

/** A new Secrets Manager client for this environment. */
export function createSecretsManagerClient(env: Env = process.env, overrides: ClientOverrides = {}): SecretsManagerClient {
  return new SecretsManagerClient({
    region: region(env),
    endpoint: credentialServiceEndpoint('SECRETS_MANAGER', env),
    sha256: KeyObjectSha256,
    ...overrides,
  });
}

let kms: KMSClient | undefined;
let secretsManager: SecretsManagerClient | undefined;

/**
 * Socket timeouts of the process-wide clients: an endpoint that accepts and never answers (a dropped VPC
 * endpoint) fails the call with a TimeoutError — transient, so CredentialServiceUnavailableError — instead of
 * holding a job's attempt past its abort (lib/engine/delivery-guard.ts). Three tries of at most 1 s to connect
 * and 3 s to answer. (`throwOnRequestTimeout`: without it @smithy/node-http-handler 4 only warns.)
 */
export const PROCESS_CLIENT_TIMEOUTS: Readonly<NonNullable<ClientOverrides['requestHandler']>> = {
  connectionTimeout: 1_000, requestTimeout: 3_000, throwOnRequestTimeout: true,
};

/** The process-wide KMS client (one per Lambda container), created from `process.env` on first use. */
export function getKmsClient(): KMSClient {
  kms ??= createKmsClient(process.env, { requestHandler: { ...PROCESS_CLIENT_TIMEOUTS } });
  return kms;
}

/** The process-wide Secrets Manager client, created from `process.env` on first use. */
export function getSecretsManagerClient(): SecretsManagerClient {
  secretsManager ??= createSecretsManagerClient(process.env, { requestHandler: { ...PROCESS_CLIENT_TIMEOUTS } });
  return secretsManager;
}

interface AwsErrorShape {
  name?: string;
  $fault?: 'client' | 'server';
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
}

/**
 * Whether an AWS SDK error is worth retrying later: no HTTP response at all (network, timeout), a server
 * fault (e.g. `KMSInternalException`, `DependencyTimeoutException`, `KeyUnavailableException`,
 * `InternalServiceError`), or throttling. Client faults (not found, access denied, invalid ciphertext,
 * disabled key) are permanent. The SDK has already retried transient errors by the time this is asked.
 */
export function isTransientAwsError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as AwsErrorShape;
  // The SDK's retry layer gives every error it throws a `$metadata`; without one the error is not the SDK's.
  if (e.$metadata === undefined) return false;
  if (e.$metadata.httpStatusCode === undefined) return true;
  if (e.$fault === 'server' || e.$retryable) return true;
  // AWS's throttling code is not a modelled exception class, so it can only be recognised by name.
  return e.$metadata.httpStatusCode === 429 || e.name === 'ThrottlingException';
}
