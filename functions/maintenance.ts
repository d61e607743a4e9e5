/**
 * Maintenance Lambda, on an EventBridge schedule (every 15 minutes): rollups for the stats and usage reports,
 * then retention in small batches (lib/maintenance/). Safe beside the dispatcher and consumers, and against an
 * overlapping run of itself (rollup watermarks are compare-and-set, deletes re-check their condition).
 */
import type { Context, ScheduledEvent } from 'aws-lambda';
import { withDatabase } from '../lib/config/with-database.ts';
import { maintenanceDepsFromEnv, runMaintenance, type MaintenanceDeps, type MaintenanceSummary } from '../lib/maintenance/maintenance-run.ts';

/** Time kept back from the function's timeout: the step in flight at the deadline, the metrics and the log. */
export const MAINTENANCE_RESERVE_MS = 20_000;

let deps: MaintenanceDeps | undefined;

export const handler = withDatabase(async (_event: ScheduledEvent, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<MaintenanceSummary> => {
  deps ??= maintenanceDepsFromEnv();
  return runMaintenance(deps, { deadline: Date.now() + context.getRemainingTimeInMillis() - MAINTENANCE_RESERVE_MS });
});
