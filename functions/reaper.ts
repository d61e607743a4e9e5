/**
 * Reaper Lambda, on an EventBridge schedule every minute: recovers jobs whose consumer crashed (expired
 * leases), whose redelivery never came, or whose message was dead-lettered (see lib/engine/reaper.ts).
 */
import type { ScheduledEvent } from 'aws-lambda';
import { reaperDepsFromEnv, runReaper, type ReaperDeps, type ReaperRunSummary } from '../lib/engine/reaper-run.ts';

let deps: ReaperDeps | undefined;

export async function handler(_event: ScheduledEvent): Promise<ReaperRunSummary> {
  deps ??= reaperDepsFromEnv();
  return runReaper(deps);
}
