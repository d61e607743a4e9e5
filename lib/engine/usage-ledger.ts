/**
 * The token and cost ledger: one AiUsageLog row per provider call, success or failure (ADR-003 §5.7), so
 * failed, timed-out, cancelled and refused attempts are billed too.
 *
 * When it is written:
 * - a call that failed or was aborted: at once, its own autocommit INSERT ({@link recordProviderCall});
 * - the call that answered: its row is handed on with the answer ({@link UsageRow}) and commits inside the
 *   projection's transaction, after the success claim's guard (bench:peers: one round trip and one commit
 *   fewer per job). Whenever that transaction does not commit — the claim refused, a projector failure, an
 *   error whose outcome is unknown — and on every path that does not reach the projection, it is written on
 *   its own ({@link UsageRow.write}). The row's id is chosen here and the INSERT is idempotent, so writing it
 *   again can never bill the call twice.
 * A call that held shared capacity (lib/capacity/) carries its settlement on the record: it is claimed here and
 * travels in the same statement text, so the hold is settled exactly when the call's row is written (in the
 * projection's transaction, or in a transaction of their own), and never otherwise — a process dying before
 * leaves the hold to expire and be swept.
 * What this costs: a process dying between the provider's answer and the projection's commit (validation and
 * the projector's row building, milliseconds) loses that call's row; before, the window ended at the separate
 * INSERT a round trip after the answer.
 */
import type { AiJob } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { insertStatement, joinStatements, type SqlStatement } from '../db/sql.ts';
import { getSqlPool, runAtomically, type SqlPool, type SqlRunner } from '../db/sql-pool.ts';
import type { ModelRoute, ProviderCallRecord, TokenUsage } from '../ai/types.ts';

export type PriceFn = (route: ModelRoute, usage: TokenUsage) => { costUsd: string; priceVersion: string };

type LedgerJob = Pick<AiJob, 'id' | 'userId' | 'attemptCount' | 'credentialMode'>;

/**
 * The ledger row of one call as an idempotent INSERT (its id is in the statement: a second run changes
 * nothing), preceded by the call's hold settlement when it carries one (idempotent too: a hold settles once).
 * Small (under 3 KB), so it never brings a script near the 16 KB pinning limit of RDS Proxy.
 */
export function usageStatement(job: LedgerJob, call: ProviderCallRecord, price: PriceFn): SqlStatement {
  const insert = ledgerInsert(job, call, price);
  return call.settlement ? joinStatements([...call.settlement.claim(), insert]) : insert;
}

function ledgerInsert(job: LedgerJob, call: ProviderCallRecord, price: PriceFn): SqlStatement {
  const { costUsd, priceVersion } = price(call.route, call.usage);
  const insert = insertStatement('AiUsageLog', {
    id: newId(), jobId: job.id, userId: job.userId, attemptNo: job.attemptCount,
    provider: call.route.provider, model: call.route.model, credentialMode: job.credentialMode,
    promptTokens: call.usage.promptTokens, completionTokens: call.usage.completionTokens, totalTokens: call.usage.totalTokens,
    costUsd, priceVersion, latencyMs: Math.round(call.latencyMs), errorCode: call.errorCode ?? null, createdAt: new Date(),
  });
  return { sql: `${insert.sql} ON DUPLICATE KEY UPDATE id = id`, values: insert.values };
}

/** One INSERT on the raw pool (autocommit; with a settlement, one transaction): durable as soon as this resolves. */
export async function recordProviderCall(job: LedgerJob, call: ProviderCallRecord, price: PriceFn, sql: SqlPool = getSqlPool()): Promise<void> {
  await runStatement(usageStatement(job, call, price), sql);
}

/** A statement alone: in a transaction of its own when it holds several. */
async function runStatement(statement: SqlStatement, sql: SqlRunner | SqlPool): Promise<void> {
  if (statement.several) await runAtomically([statement], sql as SqlPool);
  else await sql.query(statement.sql, statement.values);
}

/**
 * The ledger row of the call that answered, not yet written: the projection carries {@link statement} in its
 * transaction (and marks it written once that commits); any other path calls {@link write} (idempotent, so
 * also after a projection that failed).
 */
export class UsageRow {
  private written = false;

  constructor(readonly statement: SqlStatement, private readonly sql: () => SqlPool = getSqlPool) {}

  /** The projection's transaction carried the row and committed. */
  markWritten(): void {
    this.written = true;
  }

  /** Writes the row unless a projection already did; harmless to call again. */
  async write(): Promise<void> {
    if (this.written) return;
    await runStatement(this.statement, this.sql());
    this.written = true;
  }
}
