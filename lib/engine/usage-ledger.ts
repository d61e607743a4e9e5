/**
 * The token and cost ledger: one AiUsageLog row per provider call, success or failure (ADR-003 §5.7).
 * Written as each call ends, outside the projection transaction, so failed, timed-out and cancelled attempts
 * are billed too.
 */
import type { AiJob, Db } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import type { ModelRoute, ProviderCallRecord, TokenUsage } from '../ai/types.ts';

export type PriceFn = (route: ModelRoute, usage: TokenUsage) => { costUsd: string; priceVersion: string };

export async function recordProviderCall(
  db: Db, job: Pick<AiJob, 'id' | 'userId' | 'attemptCount' | 'credentialMode'>, call: ProviderCallRecord, price: PriceFn,
): Promise<void> {
  const { costUsd, priceVersion } = price(call.route, call.usage);
  await db.aiUsageLog.createMany({
    data: [{
      id: newId(), jobId: job.id, userId: job.userId, attemptNo: job.attemptCount,
      provider: call.route.provider, model: call.route.model, credentialMode: job.credentialMode,
      promptTokens: call.usage.promptTokens, completionTokens: call.usage.completionTokens, totalTokens: call.usage.totalTokens,
      costUsd, priceVersion, latencyMs: Math.round(call.latencyMs), errorCode: call.errorCode ?? null,
    }],
  });
}
