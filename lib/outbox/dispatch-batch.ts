/**
 * The heart of a dispatch: send a set of rows this dispatcher has claimed, through their routes, then
 * settle each row by its own outcome. Shared by the scheduled cycle and eager dispatch.
 *
 * Outcome → row: sent → `published`; retry → `pending` with attempt + 1 and a backoff, or `dead` once
 * attempts run out; reject (or no route for the event type) → `failed`. Logs carry ids, types, counts and
 * error summaries, never payloads.
 */
import type { DispatcherDeps } from './dispatcher-deps.ts';
import { settleHeldBatch, type HeldOutboxBatch } from './held-claim.ts';
import type { ClaimedOutboxEvent, DispatchRow } from './outbox-claims.ts';
import { giveUpOutboxEvent, markOutboxPublished, publishedUnder, scheduleOutboxRetry } from './outbox-settlement.ts';
import type { KnownJob, SendContext, SendOutcome } from './routes.ts';
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
 * A claimed set of rows and how it is settled: a lease (eager dispatch: rows `processing` under `holder`,
 * settled by compare-and-set on the pool) or a held batch (the scheduled run: rows locked by an open
 * transaction, settled and committed on its connection).
 */
export type DispatchClaim =
  | { kind: 'lease'; rows: readonly ClaimedOutboxEvent[]; holder: string }
  | { kind: 'held'; batch: HeldOutboxBatch };

/**
 * Sends claimed rows and settles each one. Throws only if the database fails (a held batch is then rolled
 * back: its rows are due again, and sent ones are deduplicated when re-sent).
 * `signal` aborts the sends still in flight; their rows are settled as failed attempts (retried later).
 */
export async function sendAndSettle(
  deps: DispatcherDeps, claim: DispatchClaim, signal?: AbortSignal, knownJobs?: ReadonlyMap<string, KnownJob>,
): Promise<SettleCounts> {
  const rows = claim.kind === 'lease' ? claim.rows : claim.batch.rows;
  if (rows.length === 0) return { published: 0, retried: 0, dead: 0, failed: 0 };
  // A held batch's lookups run in its own transaction: no second connection per batch in flight.
  const sql = claim.kind === 'held' && claim.batch.connection ? claim.batch.connection : deps.sql;
  const outcomes = await sendClaimed(deps, rows, { sql, ...(signal ? { signal } : {}), ...(knownJobs ? { knownJobs } : {}) });
  return (await settle(deps, claim, rows, outcomes)).counts;
}

/** Sends rows through their routes (grouped by event type); one outcome per row. Never throws. */
export async function sendClaimed(deps: DispatcherDeps, rows: readonly ClaimedOutboxEvent[], ctx: SendContext): Promise<SendOutcome[]> {
  const byType = new Map<string, ClaimedOutboxEvent[]>();
  for (const row of rows) {
    const group = byType.get(row.eventType);
    if (group) group.push(row);
    else byType.set(row.eventType, [row]);
  }
  return (await Promise.all([...byType].map(([type, group]) => sendGroup(deps, type, group, ctx)))).flat();
}

/**
 * Settles rows of one lease by their send outcomes (see {@link sendAndSettle}).
 * @returns the counts, and the ids now `published` under `holder` (a row whose lease was lost is not).
 */
export async function settleLease(
  deps: DispatcherDeps, rows: readonly ClaimedOutboxEvent[], holder: string, outcomes: SendOutcome[],
): Promise<{ counts: SettleCounts; publishedIds: readonly string[] }> {
  return settle(deps, { kind: 'lease', rows, holder }, rows, outcomes);
}

async function sendGroup(deps: DispatcherDeps, eventType: string, rows: ClaimedOutboxEvent[], ctx: SendContext): Promise<SendOutcome[]> {
  const route = deps.routes.get(eventType);
  if (!route) {
    deps.logger.error('outbox event type has no route; refusing the rows, nothing sent', {
      eventType, outboxIds: rows.map((r) => r.id),
    });
    return rows.map((r) => ({ id: r.id, result: 'reject', code: UNKNOWN_EVENT_TYPE, error: `no route for "${eventType}"` }));
  }
  let outcomes: SendOutcome[];
  try {
    outcomes = await route.send(rows, ctx);
  } catch (err) {
    const error = describeError(err);
    return rows.map((r) => ({ id: r.id, result: 'retry', error }));
  }
  // Every claimed row needs an outcome, or it would sit in `processing` until the TTL.
  const seen = new Set(outcomes.map((o) => o.id));
  for (const r of rows) if (!seen.has(r.id)) outcomes.push({ id: r.id, result: 'retry', error: 'route returned no outcome' });
  return outcomes;
}

/** What becomes of a dispatch's rows, decided from their outcomes before anything is written. */
interface SettlePlan {
  published: string[];
  retries: { ids: string[]; attempt: number; error: string; availableAt: Date }[];
  giveUps: { row: ClaimedOutboxEvent; status: 'dead' | 'failed'; reason: string; attempted: boolean }[];
}

async function settle(
  deps: DispatcherDeps, claim: DispatchClaim, rows: readonly ClaimedOutboxEvent[], outcomes: SendOutcome[],
): Promise<{ counts: SettleCounts; publishedIds: readonly string[] }> {
  const now = deps.policy.now();
  const plan = planSettlement(deps, rows, outcomes, now);
  for (const { ids, attempt, error, availableAt } of plan.retries) {
    deps.logger.warn('outbox send failed; will retry', { outboxIds: ids, attempt, availableAt: availableAt.toISOString(), error });
  }
  const counts: SettleCounts = { published: 0, retried: 0, dead: 0, failed: 0 };
  let publishedIds: readonly string[] = plan.published;
  if (claim.kind === 'held') {
    const written = await settleHeldBatch(claim.batch, {
      published: plan.published,
      retries: plan.retries,
      handOff: plan.giveUps.map((g) => g.row.id),
    }, now);
    counts.published = written.published;
    counts.retried = written.retried;
  } else {
    counts.published = await markOutboxPublished(deps.sql, plan.published, claim.holder, now);
    // Fewer marked than sent: some lease ended and another dispatcher holds (or sent) the row. Which ones?
    if (counts.published < plan.published.length) publishedIds = await publishedUnder(deps.sql, plan.published, claim.holder);
    for (const { ids, error, availableAt } of plan.retries) {
      counts.retried += await scheduleOutboxRetry(deps.sql, ids, claim.holder, { availableAt, error, now });
    }
  }
  // Given up last, each in its own transaction with its route's hook; a held batch has handed these rows
  // off as `processing` under its holder, so both kinds of claim give up alike.
  for (const g of plan.giveUps) {
    if (await giveUp(deps, g.row, g.status, g.reason, g.attempted)) counts[g.status] += 1;
  }
  return { counts, publishedIds };
}

/**
 * Outcome → plan: sent → published; reject → failed; retry → back to `pending` (rows failing alike share one
 * statement) or `dead` once attempts run out.
 */
function planSettlement(
  deps: DispatcherDeps, rows: readonly ClaimedOutboxEvent[], outcomes: SendOutcome[], now: Date,
): SettlePlan {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const plan: SettlePlan = { published: [], retries: [], giveUps: [] };
  const retries = new Map<string, SettlePlan['retries'][number]>();
  for (const outcome of outcomes) {
    const row = byId.get(outcome.id);
    if (!row) continue;
    if (outcome.result === 'sent') {
      plan.published.push(row.id);
    } else if (outcome.result === 'reject') {
      plan.giveUps.push({ row, status: 'failed', reason: `${outcome.code}: ${outcome.error}`, attempted: false });
    } else if (row.attemptCount + 1 >= deps.policy.maxAttempts) {
      plan.giveUps.push({ row, status: 'dead', reason: `${DISPATCH_FAILED}: ${outcome.error}`, attempted: true });
    } else {
      const attempt = row.attemptCount + 1;
      const key = `${attempt}\n${outcome.error}`;
      const availableAt = new Date(now.getTime() + deps.policy.backoffMs(attempt));
      const group = retries.get(key) ?? { ids: [], attempt, error: outcome.error, availableAt };
      group.ids.push(row.id);
      retries.set(key, group);
    }
  }
  plan.retries = [...retries.values()];
  return plan;
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
