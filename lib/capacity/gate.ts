/**
 * The gateway's door to shared capacity: before each route's call {@link CapacityGate.admit} reserves the
 * call's estimate (tokens for the minute window, maximum cost for the spending caps) and after it the call's
 * record carries the settlement with its real usage (lib/ai/types.ts `CallSettlement`), which the engine commits
 * with the call's ledger row. A 429 cools the model down for every consumer ({@link HeldCall.coolDown}).
 *
 * Calls on the platform's key take provider capacity (the shared limits are the platform key's limits) and are
 * charged to every cap; calls on a user's own key take no provider capacity (their key has its own limits at the
 * provider) and are charged only to that user's caps, and only where a cap was set for that user.
 */
import { createHash } from 'node:crypto';
import { ConfigurationError } from '../config/aws.ts';
import type { AiJob } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { getSqlPool, runAtomically, type SqlPool } from '../db/sql-pool.ts';
import type { SqlStatement } from '../db/sql.ts';
import type { CallSettlement, ChatRequest, ModelRoute, ProviderCallRecord, TokenUsage } from '../ai/types.ts';
import type { CallCost } from '../ai/pricing.ts';
import { anyCapEnabled, type SpendCapDefaults } from '../spend/caps.ts';
import { DATABASE_CLOCK, type DbClock } from './db-clock.ts';
import type { ProviderLimitsConfig } from './limits-config.ts';
import { reserve, type CapacityRefusal } from './reserve.ts';
import { cooldownStatement, DEFAULT_COOLDOWN_MS, settlementStatements } from './settle-statements.ts';
import { estimatePromptTokens, promptTokensBound } from './token-estimate.ts';

/** The job a call is made for, as the gate needs it. */
export type AdmissionJob = Pick<AiJob, 'id' | 'userId' | 'jobType' | 'priority' | 'leaseVersion' | 'timeoutMs' | 'credentialMode'>;

/** A refusal with the window estimate the refused call would have reserved (for the waiting job's rank). */
export type RouteRefusal = CapacityRefusal & { tokens: number };

export type Admission =
  | { kind: 'admitted'; request: ChatRequest; hold: HeldCall }
  | { kind: 'refused'; refusal: RouteRefusal };

/** A call that holds capacity. */
export interface HeldCall {
  /** True when the call took provider capacity (the platform's key): then a 429 cools the model down for all. */
  readonly sharedCapacity: boolean;
  /** The settlement of the call `record` reports (its real usage and cost). */
  settlementFor(record: ProviderCallRecord): CallSettlement;
  /**
   * After a 429 on a call that took shared capacity: the model's cooldown for every consumer (the longest wait
   * wins); returns the refusal it amounts to. (A user's own key has its own limits: its 429 is not shared.)
   */
  coolDown(retryAfterMs: number | undefined): Promise<RouteRefusal>;
}

export interface CapacityGate {
  admit(route: ModelRoute, request: ChatRequest, job: AdmissionJob): Promise<Admission>;
}

export interface SqlCapacityGateOptions {
  limits: ProviderLimitsConfig;
  caps: SpendCapDefaults;
  price: (route: ModelRoute, usage: Pick<TokenUsage, 'promptTokens' | 'completionTokens'>) => CallCost;
  pool?: () => SqlPool;
  clock?: DbClock;
  /** Added to the job's timeout for a hold's life (default {@link HOLD_MARGIN_MS}). */
  holdMarginMs?: number;
  /** How long after its due time a waiting job keeps its rank (default {@link WAIT_GRACE_MS}). */
  waitGraceMs?: number;
}

/** A hold outlives its job's timeout by this before the sweeper gives it back (validation and projection). */
export const HOLD_MARGIN_MS = 60_000;
/** A waiting job due this long ago and not back yet no longer has slots kept for it. */
export const WAIT_GRACE_MS = 30_000;
const ZERO_USD = '0.00000000';

/**
 * Checks at start that every route can run under the configuration: limits for each model, and a price for each
 * when any spending cap is on (a model without a price cannot run under a cap: its cost would count as $0).
 * @throws ConfigurationError naming the model
 */
export function assertRoutesConfigured(routes: readonly ModelRoute[], o: Pick<SqlCapacityGateOptions, 'limits' | 'caps' | 'price'>): void {
  for (const route of routes) {
    const name = `${route.provider}/${route.model}`;
    if (!o.limits.limitsFor(route)) throw new ConfigurationError(`limits of ${name}`, 'are missing: add them to PROVIDER_LIMITS');
    if (anyCapEnabled(o.caps) && !o.price(route, { promptTokens: 0, completionTokens: 0 }).priced) {
      throw new ConfigurationError(`price of ${name}`, 'is missing from lib/ai/pricing.ts: a model without a price cannot run under a spending cap');
    }
  }
}

/** The gate over the database (./reserve.ts, ./settle-statements.ts). */
export class SqlCapacityGate implements CapacityGate {
  constructor(private readonly o: SqlCapacityGateOptions) {}

  async admit(route: ModelRoute, request: ChatRequest, job: AdmissionJob): Promise<Admission> {
    const limits = this.o.limits.limitsFor(route);
    if (!limits) throw new ConfigurationError(`limits of ${route.provider}/${route.model}`, 'are missing: add them to PROVIDER_LIMITS');
    const maxTokens = request.maxTokens ?? limits.maxOutputTokens;
    const tokens = estimatePromptTokens(request.messages) + maxTokens;
    const cost = this.o.price(route, { promptTokens: promptTokensBound(request.messages), completionTokens: maxTokens });
    if (!cost.priced && anyCapEnabled(this.o.caps)) {
      throw new ConfigurationError(`price of ${route.provider}/${route.model}`, 'is missing: a model without a price cannot run under a spending cap');
    }
    const platform = job.credentialMode === 'platform_key';
    const holdKey = holdKeyOf(job, route);
    const costUsd = cost.priced ? cost.costUsd : ZERO_USD;
    const reservation = await reserve({
      holdId: newId(), holdKey, job, route, costUsd, defaults: this.o.caps,
      capacity: platform ? { limits, tokens } : null, spend: costUsd === ZERO_USD ? 'none' : platform ? 'platform' : 'own',
      holdMs: job.timeoutMs + (this.o.holdMarginMs ?? HOLD_MARGIN_MS), waitGraceMs: this.o.waitGraceMs ?? WAIT_GRACE_MS,
      firstLease: job.leaseVersion === 1, clock: this.#clock,
    }, this.#pool());
    if (reservation.kind === 'refused') return { kind: 'refused', refusal: { ...reservation.refusal, tokens } };
    return { kind: 'admitted', request: { ...request, maxTokens }, hold: this.#held(holdKey, route, tokens, platform, costUsd !== ZERO_USD) };
  }

  get #clock(): DbClock {
    return this.o.clock ?? DATABASE_CLOCK;
  }

  #pool(): SqlPool {
    return (this.o.pool ?? getSqlPool)();
  }

  #held(holdKey: string, route: ModelRoute, tokens: number, platform: boolean, charged: boolean): HeldCall {
    return {
      sharedCapacity: platform,
      settlementFor: (record) => {
        const { costUsd, priced } = this.o.price(route, record.usage);
        const actual = { tokens: record.usage.totalTokens, costUsd: priced ? costUsd : ZERO_USD };
        return new HoldSettlement(settlementStatements(holdKey, actual, { capacity: platform, charged }), () => this.#pool());
      },
      coolDown: async (retryAfterMs) => {
        const waitMs = retryAfterMs ?? DEFAULT_COOLDOWN_MS;
        const s = cooldownStatement(route, waitMs, this.#clock);
        await this.#pool().query(s.sql, s.values);
        return { reason: 'cooldown', route, retryInMs: waitMs, at: new Date(), tokens };
      },
    };
  }
}

/** One hold per job, lease and route: a second reservation under the same lease takes nothing twice. */
export function holdKeyOf(job: Pick<AdmissionJob, 'id' | 'leaseVersion'>, route: ModelRoute): string {
  const key = `${job.id}:${job.leaseVersion}:${route.provider}/${route.model}`;
  return key.length <= 191 ? key : `${job.id}:${job.leaseVersion}:${createHash('sha256').update(`${route.provider}/${route.model}`).digest('hex')}`;
}

class HoldSettlement implements CallSettlement {
  #claimed = false;

  constructor(private readonly statements: SqlStatement[], private readonly pool: () => SqlPool) {}

  get claimed(): boolean {
    return this.#claimed;
  }

  claim(): SqlStatement[] {
    this.#claimed = true;
    return this.statements;
  }

  async runUnclaimed(): Promise<void> {
    if (this.#claimed) return;
    this.#claimed = true;
    await runAtomically(this.statements, this.pool());
  }
}
