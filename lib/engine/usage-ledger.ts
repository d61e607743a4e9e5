/**
 * The token and cost ledger: one AiUsageLog row per provider call, success or failure (ADR-003 §5.7).
 * Written as each call ends, outside the projection transaction, so failed, timed-out and cancelled attempts
 * are billed too.
 */
import type { AiJob } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { insertStatement } from '../db/sql.ts';
import { getSqlPool, type SqlRunner } from '../db/sql-pool.ts';
import type { ModelRoute, ProviderCallRecord, TokenUsage } from '../ai/types.ts';

export type PriceFn = (route: ModelRoute, usage: TokenUsage) => { costUsd: string; priceVersion: string };

/** One INSERT on the raw pool (autocommit): the row is durable as soon as this resolves. */
export async function recordProviderCall(
  job: Pick<AiJob, 'id' | 'userId' | 'attemptCount' | 'credentialMode'>, call: ProviderCallRecord, price: PriceFn,
  sql: SqlRunner = getSqlPool(),
): Promise<void> {
  const { costUsd, priceVersion } = price(call.route, call.usage);
  const insert = insertStatement('AiUsageLog', {
    id: newId(), jobId: job.id, userId: job.userId, attemptNo: job.attemptCount,
    provider: call.route.provider, model: call.route.model, credentialMode: job.credentialMode,
    promptTokens: call.usage.promptTokens, completionTokens: call.usage.completionTokens, totalTokens: call.usage.totalTokens,
    costUsd, priceVersion, latencyMs: Math.round(call.latencyMs), errorCode: call.errorCode ?? null, createdAt: new Date(),
  });
  await sql.query(insert.sql, insert.values);
}
