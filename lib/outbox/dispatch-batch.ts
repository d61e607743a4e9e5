/**
 * The heart of a dispatch: send a set of rows this dispatcher has claimed, through their routes, then
 * settle each row by its own outcome. Shared by the scheduled cycle and eager dispatch.
 *
 * Outcome → row: sent → `published`; retry → `pending` with attempt + 1 and a backoff, or `dead` once
 * attempts run out; reject (or no route for the event type) → `failed`. Logs carry ids, types, counts and
 * error summaries, never payloads.
 */
import type { DispatcherDeps } from './dispatcher-deps.ts';
import type { ClaimedOutboxEvent, DispatchRow } from './outbox-claims.ts';
import { giveUpOutboxEvent, markOutboxPublished, scheduleOutboxRetry } from './outbox-settlement.ts';
import type { SendOutcome } from './routes.ts';
import { describeError } from './send-helpers.ts';
import { DISPATCH_FAILED } from './sqs-sender.ts';

/** What became of the rows of one dispatch. */
export interface SettleCounts {
  published: number;
  retried: number;
  dead: number;
  failed: number;
}

/** Code stored on a row whose event type has no route. */
export const UNKNOWN_EVENT_TYPE = 'UNKNOWN_EVENT_TYPE';

/**
 * Sends claimed rows (all held by `holder`) and settles each one. Throws only if the database fails.
 * `signal` aborts the sends still in flight; their rows are settled as failed attempts (retried later).
 */
export async function sendAndSettle(
  deps: DispatcherDeps, rows: readonly ClaimedOutboxEvent[], holder: string, signal?: AbortSignal,
): Promise<SettleCounts> {
  if (rows.length === 0) return { published: 0, retried: 0, dead: 0, failed: 0 };
  const byType = new Map<string, ClaimedOutboxEvent[]>();
  for (const row of rows) {
    const group = byType.get(row.eventType);
    if (group) group.push(row);
    else byType.set(row.eventType, [row]);
  }
  const outcomes = (await Promise.all([...byType].map(([type, group]) => sendGroup(deps, type, group, signal)))).flat();
  return settle(deps, rows, outcomes, holder);
}

async function sendGroup(
  deps: DispatcherDeps, eventType: string, rows: ClaimedOutboxEvent[], signal: AbortSignal | undefined,
): Promise<SendOutcome[]> {
  const route = deps.routes.get(eventType);
  if (!route) {
    deps.logger.error('outbox event type has no route; refusing the rows, nothing sent', {
      eventType, outboxIds: rows.map((r) => r.id),
    });
    return rows.map((r) => ({ id: r.id, result: 'reject', code: UNKNOWN_EVENT_TYPE, error: `no route for "${eventType}"` }));
  }
  let outcomes: SendOutcome[];
  try {
    outcomes = await route.send(rows, { sql: deps.sql, ...(signal ? { signal } : {}) });
  } catch (err) {
    const error = describeError(err);
    return rows.map((r) => ({ id: r.id, result: 'retry', error }));
  }
  // Every claimed row needs an outcome, or it would sit in `processing` until the TTL.
  const seen = new Set(outcomes.map((o) => o.id));
  for (const r of rows) if (!seen.has(r.id)) outcomes.push({ id: r.id, result: 'retry', error: 'route returned no outcome' });
  return outcomes;
}

async function settle(
  deps: DispatcherDeps, rows: readonly ClaimedOutboxEvent[], outcomes: SendOutcome[], holder: string,
): Promise<SettleCounts> {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const now = deps.policy.now();
  const sentIds = outcomes.filter((o) => o.result === 'sent').map((o) => o.id);
  const counts: SettleCounts = { published: await markOutboxPublished(deps.sql, sentIds, holder, now), retried: 0, dead: 0, failed: 0 };
  // Rows that failed alike (same attempt number, same error) go back to `pending` in one statement.
  const retries = new Map<string, { attempt: number; error: string; rows: ClaimedOutboxEvent[] }>();
  for (const outcome of outcomes) {
    const row = byId.get(outcome.id);
    if (!row || outcome.result === 'sent') continue;
    if (outcome.result === 'reject') {
      if (await giveUp(deps, row, 'failed', `${outcome.code}: ${outcome.error}`, false)) counts.failed += 1;
      continue;
    }
    const attempt = row.attemptCount + 1;
    if (attempt >= deps.policy.maxAttempts) {
      if (await giveUp(deps, row, 'dead', `${DISPATCH_FAILED}: ${outcome.error}`, true)) counts.dead += 1;
      continue;
    }
    const key = `${attempt}\n${outcome.error}`;
    const group = retries.get(key) ?? { attempt, error: outcome.error, rows: [] };
    group.rows.push(row);
    retries.set(key, group);
  }
  for (const { attempt, error, rows: failed } of retries.values()) {
    const availableAt = new Date(now.getTime() + deps.policy.backoffMs(attempt));
    deps.logger.warn('outbox send failed; will retry', {
      outboxIds: failed.map((r) => r.id), attempt, availableAt: availableAt.toISOString(), error,
    });
    counts.retried += await scheduleOutboxRetry(deps.sql, failed.map((r) => r.id), holder, { availableAt, error, now });
  }
  return counts;
}

async function giveUp(
  deps: DispatcherDeps, row: ClaimedOutboxEvent, status: 'dead' | 'failed', reason: string, attempted: boolean,
): Promise<boolean> {
  deps.logger.error(`outbox event given up as ${status}`, { ...ids(row), attemptCount: row.attemptCount + (attempted ? 1 : 0), reason });
  const onGiveUp = deps.routes.get(row.eventType)?.onGiveUp;
  return giveUpOutboxEvent(deps.db, row, { status, reason, attempted, ...(onGiveUp ? { onGiveUp } : {}) });
}

function ids(row: DispatchRow) {
  return { outboxId: row.id, eventType: row.eventType, aggregateId: row.aggregateId };
}
