/**
 * Retention settings, per stage from the environment (the CDK stack sets them per stage; docs/data-at-scale.md).
 * Per job type settings (snapshot days, opt-in job deletion) live in the job type's definition (`retention`).
 */
import { ConfigurationError } from '../config/aws.ts';

type Env = Readonly<Record<string, string | undefined>>;

export interface RetentionConfig {
  /** Published outbox rows are deleted this many days after publication. */
  outboxPublishedDays: number;
  /** Failed and dead outbox rows: null keeps them until an operator acts (the default). */
  outboxFailedDays: number | null;
  /** Usage ledger rows (billing detail) are deleted this many days after the call, once rolled up; null keeps them. */
  usageLedgerDays: number | null;
  /** Revoked user keys (their ciphertext) are deleted this many days after revocation; null keeps them. */
  revokedCredentialDays: number | null;
  /** A job's stream chunks (the preview of its output) are deleted this many days after it finished; null keeps them. */
  streamDays: number | null;
  /** Rows per batch: each batch is one short transaction on primary keys. */
  batchSize: number;
  /** A maintenance run (rollups and retention together) stops starting steps after this long, or earlier when the Lambda's remaining time says so. */
  budgetMs: number;
}

export const DEFAULT_RETENTION: RetentionConfig = {
  outboxPublishedDays: 7,
  outboxFailedDays: null,
  usageLedgerDays: 400,
  revokedCredentialDays: 30,
  streamDays: 7,
  batchSize: 500,
  budgetMs: 60_000,
};

/** The environment variable of each setting; `keep` (or empty) means null where null is allowed. */
export const RETENTION_ENV = {
  outboxPublishedDays: 'RETENTION_OUTBOX_PUBLISHED_DAYS',
  outboxFailedDays: 'RETENTION_OUTBOX_FAILED_DAYS',
  usageLedgerDays: 'RETENTION_USAGE_LEDGER_DAYS',
  revokedCredentialDays: 'RETENTION_REVOKED_CREDENTIAL_DAYS',
  streamDays: 'RETENTION_STREAM_DAYS',
  batchSize: 'RETENTION_BATCH_SIZE',
  budgetMs: 'RETENTION_BUDGET_MS',
} as const satisfies Record<keyof RetentionConfig, string>;

/** @throws ConfigurationError for a value that is not a positive integer (or `keep` where allowed) */
export function retentionConfigFromEnv(env: Env = process.env): RetentionConfig {
  const read = <K extends keyof RetentionConfig>(key: K, nullable: boolean): RetentionConfig[K] => {
    const raw = env[RETENTION_ENV[key]]?.trim();
    if (!raw) return DEFAULT_RETENTION[key];
    if (nullable && raw === 'keep') return null as RetentionConfig[K];
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new ConfigurationError(RETENTION_ENV[key], `must be a positive integer${nullable ? " or 'keep'" : ''}`);
    return n as RetentionConfig[K];
  };
  return {
    outboxPublishedDays: read('outboxPublishedDays', false),
    outboxFailedDays: read('outboxFailedDays', true),
    usageLedgerDays: read('usageLedgerDays', true),
    revokedCredentialDays: read('revokedCredentialDays', true),
    streamDays: read('streamDays', true),
    batchSize: read('batchSize', false),
    budgetMs: read('budgetMs', false),
  };
}
