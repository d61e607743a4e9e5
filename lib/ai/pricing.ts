/**
 * What a provider call cost, from a versioned price table. Every usage-ledger row stores the
 * {@link PRICE_TABLE_VERSION} it was priced with, so a later price change never rewrites history: change a
 * price ⇒ bump the version.
 *
 * Money is computed in integers (1e-8 USD units) and returned as a decimal string with 8 places, the scale of
 * `AiUsageLog.costUsd` (DECIMAL(14,8)); floats never touch it. Rounding is half-up per call.
 */
import type { ModelRoute, TokenUsage } from './types.ts';

/** Identifies the prices below; stored on every usage row (`AiUsageLog.priceVersion`, ≤ 32 chars). */
export const PRICE_TABLE_VERSION = '2025-09-29.1';

/** USD per 1M tokens, as decimal strings with at most 6 places. */
export interface ModelPrice {
  promptPer1M: string;
  completionPer1M: string;
}

/**
 * Prices by `provider/model`; `provider/*` prices every model of a provider. Sources:
 * - `deepseek`: api-docs.deepseek.com "Models & Pricing" as of 2025-09-29 (V3.2: both models, cache-miss input
 *   price, since the ledger does not split cache hits; so this slightly overstates cached prompts).
 * - `openai-compat/gpt-4o-mini`: an example entry for the optional second provider; add the model you
 *   configure in `OPENAI_COMPAT_MODEL`, or its calls are recorded at cost 0 with `priced: false`.
 * - `mock/*`: the local mock provider is free.
 */
export const PRICE_TABLE: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'deepseek/deepseek-chat': { promptPer1M: '0.28', completionPer1M: '0.42' },
  'deepseek/deepseek-reasoner': { promptPer1M: '0.28', completionPer1M: '0.42' },
  'openai-compat/gpt-4o-mini': { promptPer1M: '0.15', completionPer1M: '0.60' },
  'mock/*': { promptPer1M: '0', completionPer1M: '0' },
});

/** The cost of one call. */
export interface CallCost {
  /** USD, 8 decimal places, e.g. `"0.00001234"`. */
  costUsd: string;
  priceVersion: string;
  /** False when the table has no price for the route: the cost is recorded as 0 and should be looked at. */
  priced: boolean;
}

const PRICE_DECIMALS = 6;
const COST_DECIMALS = 8;

/** The price of `route`: its exact entry, else its provider's `*` entry, else undefined. */
export function priceOf(route: ModelRoute, table: Readonly<Record<string, ModelPrice>> = PRICE_TABLE): ModelPrice | undefined {
  return table[`${route.provider}/${route.model}`] ?? table[`${route.provider}/*`];
}

/** Cost of `usage` on `route` under {@link PRICE_TABLE}; an unknown route costs 0 with `priced: false`. */
export function costOf(route: ModelRoute, usage: Pick<TokenUsage, 'promptTokens' | 'completionTokens'>): CallCost {
  const price = priceOf(route);
  if (!price) return { costUsd: formatUnits(0n), priceVersion: PRICE_TABLE_VERSION, priced: false };
  const micro = tokenCostMicro(usage.promptTokens, price.promptPer1M) + tokenCostMicro(usage.completionTokens, price.completionPer1M);
  // micro = tokens × (USD per 1M × 1e6) = USD × 1e12; to 1e-8 USD units divide by 1e4, rounding half up.
  const scale = 10n ** BigInt(2 * PRICE_DECIMALS - COST_DECIMALS);
  return { costUsd: formatUnits((micro + scale / 2n) / scale), priceVersion: PRICE_TABLE_VERSION, priced: true };
}

function tokenCostMicro(tokens: number, per1M: string): bigint {
  if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`token count must be a non-negative integer, got ${tokens}`);
  return BigInt(tokens) * parseDecimal(per1M, PRICE_DECIMALS);
}

/** "0.28" → 280000n at 6 places. Rejects negatives, exponents and more places than `places`. */
function parseDecimal(value: string, places: number): bigint {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(value);
  if (!m || (m[2]?.length ?? 0) > places) throw new RangeError(`price "${value}" must be a decimal with at most ${places} places`);
  return BigInt(m[1]!) * 10n ** BigInt(places) + BigInt((m[2] ?? '').padEnd(places, '0') || '0');
}

function formatUnits(units: bigint): string {
  const s = units.toString().padStart(COST_DECIMALS + 1, '0');
  return `${s.slice(0, -COST_DECIMALS)}.${s.slice(-COST_DECIMALS)}`;
}
