/**
 * Reaper Lambda, on an EventBridge schedule every minute: recovers jobs whose consumer crashed (expired
 * leases), whose redelivery never came, or whose message was dead-lettered (see lib/engine/reaper.ts).
 */
import type { ScheduledEvent } from 'aws-lambda';
import { withDatabase } from '../lib/config/with-database.ts';
import { reaperDepsFromEnv, runReaper, type ReaperDeps, type ReaperRunSummary } from '../lib/engine/reaper-run.ts';

let deps: ReaperDeps | undefined;

export const handler = withDatabase(async (_event: ScheduledEvent, _context: unknown): Promise<ReaperRunSummary> => {
  deps ??= reaperDepsFromEnv();
  return runReaper(deps);
});
