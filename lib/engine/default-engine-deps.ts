/**
 * The engine as the consumer Lambdas run it: the process-wide database, every registered job type, the AI
 * gateway over the providers configured in the environment, credentials from Secrets Manager / KMS.
 * Tests and the local runtime pass overrides (another router, shorter lease timings). Every attempt's previews
 * go to the job's stream log (`openAttemptStream`, lib/stream/attempt-appender.ts).
 */
import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { getPrisma } from '../db/client.ts';
import { generate } from '../ai/gateway.ts';
import { modelRouterFromEnv } from '../ai/provider-config.ts';
import type { ModelRouter } from '../ai/model-router.ts';
import { costOf } from '../ai/pricing.ts';
import { defaultContentSafetyChecker } from '../ai/content-safety.ts';
import { getPrompt } from '../ai/prompts/registry.ts';
import { jobRegistry } from '../jobs/registry.ts';
import { projectorRegistry } from '../jobs/projector-registry.ts';
import { resolveCredentials } from '../credentials/resolve-credentials.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { CapacityGate } from '../capacity/gate.ts';
import { capacityGateFromEnv } from '../capacity/gate-from-env.ts';
import { DEFAULT_LEASE_TIMING } from './lease-keeper.ts';
import { createAttemptStreams } from '../stream/attempt-appender.ts';

export interface EngineOverrides extends Partial<EngineDeps> {
  router?: ModelRouter;
  /** Shared provider limits and spending caps (default: from the environment; null: none). */
  capacity?: CapacityGate | null;
}

export function createEngineDeps(overrides: EngineOverrides = {}): EngineDeps {
  const { router: routerOverride, capacity: capacityOverride, ...rest } = overrides;
  const router = routerOverride ?? modelRouterFromEnv();
  const logger = rest.logger ?? new Logger({ serviceName: 'ai-job-engine' });
  const capacity = capacityOverride === undefined ? capacityGateFromEnv(router) : capacityOverride;
  return {
    db: getPrisma(),
    registry: jobRegistry,
    projectors: projectorRegistry,
    prompts: { get: getPrompt },
    generate: (request, opts) => generate(request, opts, { router, capacity }),
    resolveCredentials: (job) => resolveCredentials(job),
    safety: defaultContentSafetyChecker,
    price: (route, usage) => costOf(route, usage),
    logger,
    metrics: new Metrics({ namespace: 'AiJobs', serviceName: 'ai-job-engine' }),
    instanceId: `consumer-${randomUUID()}`,
    timing: DEFAULT_LEASE_TIMING,
    // Each attempt's previews, batched into the job's stream log and published (docs/streaming.md).
    openAttemptStream: createAttemptStreams({ logger }),
    ...rest,
  };
}
