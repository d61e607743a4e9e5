/**
 * The retention run (issue 12, docs/data-at-scale.md): deletes what has outlived its purpose, in batches
 * (./batches.ts), oldest first, each through an index range:
 * - published outbox rows `outboxPublishedDays` after publication (index status, availableAt);
 * - failed and dead outbox rows only when `outboxFailedDays` is set (default: kept until an operator acts);
 * - snapshots at their `expiresAt` (ADR-003 §8.4), for finished jobs only (index expiresAt);
 * - usage ledger rows `usageLedgerDays` after the call, and only once rolled up (index createdAt);
 * - revoked user keys `revokedCredentialDays` after their revocation (index status, revokedAt): a job that
 *   names one fails with CREDENTIAL_INVALID either way, and a key that can no longer be used is better gone;
 * - stream chunks `streamDays` after their job finished (./stream-retention.ts, primary key from its start);
 * - jobs of the types that opt in (./job-deletion.ts).
 * Transitions are kept as long as their job: they are its audit trail (and its stream log's status entries).
 */
import type { PrismaDb } from '../db/client.ts';
import type { JobDefinitionRegistry } from '../jobs/registry.ts';
import { readWatermark } from '../rollups/watermark.ts';
import { DAY_MS, minDate } from '../rollups/time-buckets.ts';
import { deleteByKeys, deleteInBatches, selectIds, type BatchLoop, type KeyedTable } from './batches.ts';
import { deleteExpiredJobs } from './job-deletion.ts';
import { deleteStreamChunks } from './stream-retention.ts';
import type { RetentionConfig } from './retention-config.ts';

export interface RetentionCounts {
  outboxPublished: number;
  outboxFailed: number;
  snapshots: number;
  usageLedger: number;
  revokedCredentials: number;
  streamChunks: number;
  jobs: number;
}

/** Each table retention deletes from, by primary key. */
const byId = (table: string): KeyedTable => ({ table, column: 'id', index: 'PRIMARY' });

const daysBefore = (now: Date, days: number) => new Date(now.getTime() - days * DAY_MS);

/** One retention pass at `now`; stops starting batches at `deadline` (epoch ms; default `config.budgetMs` from now). */
export async function runRetention(
  db: PrismaDb, registry: JobDefinitionRegistry, config: RetentionConfig, now: Date, deadline = Date.now() + config.budgetMs,
): Promise<RetentionCounts> {
  const loop: BatchLoop = { batchSize: config.batchSize, deadline };
  const outboxPublished = await deleteOutbox(db, loop, "'published'", 'publishedAt', daysBefore(now, config.outboxPublishedDays));
  const outboxFailed = config.outboxFailedDays === null ? 0
    : await deleteOutbox(db, loop, "'failed', 'dead'", 'updatedAt', daysBefore(now, config.outboxFailedDays));
  const snapshots = await deleteExpiredSnapshots(db, loop, now);
  const usageLedger = config.usageLedgerDays === null ? 0 : await deleteUsageLedger(db, loop, daysBefore(now, config.usageLedgerDays));
  const revokedCredentials = config.revokedCredentialDays === null ? 0
    : await deleteRevokedCredentials(db, loop, daysBefore(now, config.revokedCredentialDays));
  const streamChunks = config.streamDays === null ? 0 : await deleteStreamChunks(db, loop, daysBefore(now, config.streamDays));
  const jobs = await deleteExpiredJobs(db, registry, loop, now);
  return { outboxPublished, outboxFailed, snapshots, usageLedger, revokedCredentials, streamChunks, jobs };
}

/** Outbox rows in `statuses` due and settled before `cutoff` (`availableAt` ≤ settle time, so the index range is exact). */
async function deleteOutbox(db: PrismaDb, loop: BatchLoop, statuses: string, settledAt: string, cutoff: Date): Promise<number> {
  const where = `status IN (${statuses}) AND availableAt < ? AND ${settledAt} < ?`;
  return deleteInBatches(db, loop,
    (limit) => selectIds(db, `SELECT id FROM \`OutboxEvent\` WHERE ${where} ORDER BY status, availableAt LIMIT ${limit}`, cutoff, cutoff),
    (tx, ids) => deleteByKeys(tx, byId('OutboxEvent'), ids, where, cutoff, cutoff));
}

/** Snapshots past `expiresAt` whose job has finished (a job never runs without its snapshot). */
async function deleteExpiredSnapshots(db: PrismaDb, loop: BatchLoop, now: Date): Promise<number> {
  return deleteInBatches(db, loop,
    (limit) => selectIds(db,
      `SELECT s.id FROM \`AiJobSnapshot\` s JOIN \`AiJob\` j ON j.id = s.jobId
       WHERE s.expiresAt < ? AND j.lifecycleStatus IN ('succeeded', 'failed', 'cancelled') ORDER BY s.expiresAt LIMIT ${limit}`, now),
    (tx, ids) => deleteByKeys(tx, byId('AiJobSnapshot'), ids, 'expiresAt < ?', now));
}

/** Ledger rows older than `cutoff` and already in the usage rollup (before its watermark). */
async function deleteUsageLedger(db: PrismaDb, loop: BatchLoop, cutoff: Date): Promise<number> {
  const watermark = await readWatermark(db, 'usage');
  if (!watermark) return 0;
  const until = minDate(cutoff, watermark);
  return deleteInBatches(db, loop,
    (limit) => selectIds(db, `SELECT id FROM \`AiUsageLog\` WHERE createdAt < ? ORDER BY createdAt LIMIT ${limit}`, until),
    (tx, ids) => deleteByKeys(tx, byId('AiUsageLog'), ids, 'createdAt < ?', until));
}

/** User keys revoked before `cutoff` (an active key is never touched: the condition is re-checked on delete). */
async function deleteRevokedCredentials(db: PrismaDb, loop: BatchLoop, cutoff: Date): Promise<number> {
  const where = "status = 'revoked' AND revokedAt < ?";
  return deleteInBatches(db, loop,
    (limit) => selectIds(db, `SELECT id FROM \`UserModelCredential\` WHERE ${where} ORDER BY status, revokedAt LIMIT ${limit}`, cutoff),
    (tx, ids) => deleteByKeys(tx, byId('UserModelCredential'), ids, where, cutoff));
}
