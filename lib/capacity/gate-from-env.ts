/**
 * The capacity gate as the engine runs it: provider limits (`PROVIDER_LIMITS`) and spending-cap defaults
 * (`SPEND_CAP_*_USD`) from the environment, prices from lib/ai/pricing.ts, the database's clock. Checked
 * against every route at start: a model without limits, or without a price while a cap is on, is a
 * configuration error before any job runs.
 */
import type { ModelRouter } from '../ai/model-router.ts';
import { costOf } from '../ai/pricing.ts';
import { spendCapDefaultsFromEnv } from '../spend/caps.ts';
import { assertRoutesConfigured, SqlCapacityGate } from './gate.ts';
import { providerLimitsFromEnv } from './limits-config.ts';

/** @throws ConfigurationError for a malformed setting, or a route the configuration does not cover */
export function capacityGateFromEnv(router: ModelRouter, env: Readonly<Record<string, string | undefined>> = process.env): SqlCapacityGate {
  const options = { limits: providerLimitsFromEnv(env), caps: spendCapDefaultsFromEnv(env), price: costOf };
  assertRoutesConfigured(router.routes, options);
  return new SqlCapacityGate(options);
}
