/**
 * Reaper Lambda, on an EventBridge schedule every minute: recovers jobs whose consumer crashed (expired
 * leases), whose redelivery never came, or whose message was dead-lettered (see lib/engine/reaper.ts).
 */
import type { ScheduledEvent } from 'aws-lambda';
import { withDatabase } from '../lib/config/with-database.ts';
import { withStreamPublishing } from '../lib/realtime/handler-publishing.ts';
import { reaperDepsFromEnv, runReaper, type ReaperDeps, type ReaperRunSummary } from '../lib/engine/reaper-run.ts';

let deps: ReaperDeps | undefined;

// Released and failed jobs get status entries; their pushes are flushed (bounded) before it returns.
export const handler = withStreamPublishing(withDatabase(async (_event: ScheduledEvent, _context: unknown): Promise<ReaperRunSummary> => {
  deps ??= reaperDepsFromEnv();
  return runReaper(deps);
}));
