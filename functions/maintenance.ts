/**
 * Maintenance Lambda, on an EventBridge schedule (every 15 minutes): rollups for the stats and usage reports,
 * then retention in small batches (lib/maintenance/). Safe beside the dispatcher and consumers, and against an
 * overlapping run of itself (rollup watermarks are compare-and-set, deletes re-check their condition).
 */
import type { ScheduledEvent } from 'aws-lambda';
import { withDatabase } from '../lib/config/with-database.ts';
import { maintenanceDepsFromEnv, runMaintenance, type MaintenanceDeps, type MaintenanceSummary } from '../lib/maintenance/maintenance-run.ts';

let deps: MaintenanceDeps | undefined;

export const handler = withDatabase(async (_event: ScheduledEvent, _context: unknown): Promise<MaintenanceSummary> => {
  deps ??= maintenanceDepsFromEnv();
  return runMaintenance(deps);
});
