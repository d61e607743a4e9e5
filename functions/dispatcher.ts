/**
 * Outbox dispatcher Lambda, on an EventBridge schedule every minute: sends due outbox rows to the job
 * queues and the event bus until none remain or the time left is short (see lib/outbox/dispatcher.ts).
 * Returns the run's counts; failures of single rows are settled on the rows, never thrown.
 */
import type { Context, ScheduledEvent } from 'aws-lambda';
import { runScheduledDispatch, type DispatchRunSummary } from '../lib/outbox/dispatcher.ts';
import { defaultDispatcherDeps } from '../lib/outbox/dispatcher-deps.ts';
import { withDatabase } from '../lib/config/with-database.ts';
import { withStreamPublishing } from '../lib/realtime/handler-publishing.ts';

// A job whose message cannot be sent fails (DISPATCH_FAILED): that status entry is pushed, flushed (bounded) before it returns.
export const handler = withStreamPublishing(withDatabase(async (_event: ScheduledEvent, context: Context): Promise<DispatchRunSummary> =>
  runScheduledDispatch(defaultDispatcherDeps(), { remainingTimeMs: () => context.getRemainingTimeInMillis() })));
