/**
 * Errors of the credentials capability that are not job failures: the API maps them to HTTP statuses
 * (400, 404, 503). The engine meets only {@link CredentialInvalidError} (lib/jobs/failures.ts) and
 * {@link CredentialServiceUnavailableError} (wrapped as a retryable internal failure).
 *
 * Invariant: no message, property or `cause` of these errors holds an API key or a data key. Messages name
 * ids, providers and rules, never values.
 */
import { EngineError } from '../errors.ts';

/** Why a submitted API key was refused. */
export type KeyFormatProblem = 'empty' | 'too_short' | 'too_long' | 'invalid_characters';

/** The submitted API key is not shaped like one (API: 400). The message names the rule, never the key. */
export class CredentialKeyFormatError extends EngineError {
  readonly code = 'CREDENTIAL_KEY_FORMAT';
  constructor(readonly problem: KeyFormatProblem, message: string) {
    super(message);
  }
}

/** Users may store keys only for the providers in `USER_KEY_PROVIDERS` (API: 400). */
export class UnsupportedKeyProviderError extends EngineError {
  readonly code = 'CREDENTIAL_PROVIDER_UNSUPPORTED';
  constructor(readonly provider: string) {
    super(`Users cannot store keys for provider ${provider}`);
  }
}

/** The user has no active key for the provider (API: 404 on `DELETE`). */
export class CredentialNotFoundError extends EngineError {
  readonly code = 'CREDENTIAL_NOT_FOUND';
  constructor(readonly provider: string) {
    super(`No active ${provider} key`);
  }
}

/**
 * The envelope could not be opened: KMS refused the data key (wrong encryption context, tampered blob,
 * wrong or disabled key) or AES-GCM authentication failed. Permanent: retrying gives the same answer.
 */
export class EnvelopeDecryptionError extends EngineError {
  readonly code = 'CREDENTIAL_UNDECRYPTABLE';
}

/**
 * KMS refused to make a data key for a reason retrying will not fix: the key id is wrong, the key is disabled
 * or pending deletion, or access is denied. A deployment problem (API: 500).
 */
export class EnvelopeEncryptionError extends EngineError {
  readonly code = 'CREDENTIAL_ENCRYPTION_FAILED';
}

/**
 * KMS or Secrets Manager could not be reached or answered with a server fault or throttling after the SDK's
 * own retries (API: 503). Retryable; the engine wraps it as an internal, retryable failure.
 */
export class CredentialServiceUnavailableError extends EngineError {
  readonly code = 'CREDENTIAL_SERVICE_UNAVAILABLE';
  override readonly retryable = true;
}
