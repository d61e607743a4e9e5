/**
 * Eager sends of one process, coalesced: while a send is in flight, the rows created meanwhile wait for it,
 * then go together in one SendMessageBatch and one settle statement. No timer and no window: an idle process
 * sends its row at once; a busy one sends fewer, larger batches. Measured in the peers bench on the local
 * runtime: eager settles per job 1.00 → 0.77–0.84 at 4 clients, → 0.45 at 16 clients (where jobs/s rose by a
 * quarter; docs/performance.md). On Lambda a container serves one request at a time, so every batch there
 * holds one row and nothing changes.
 *
 * The next batch's send overlaps the previous batch's settle. A row never waits behind a send older than
 * the policy's `eagerWaitMs` (50 ms; a normal one takes a few ms): behind a slow queue endpoint, new rows
 * start sends of their own instead of queueing behind it. Each row keeps its own time budget (the caller's signal); a
 * batch's send is aborted when the budget of any of its rows runs out, and its rows are settled as failed
 * attempts. A row whose budget ran out while it waited (only when the event loop stalled) is not sent but
 * settled the same way; the scheduled dispatcher sends them.
 *
 * Rows of one process share its eager holder ({@link eagerHolder}), so a batch settles in one statement.
 */
import { newId } from '../db/ids.ts';
import { sendClaimed, settleLease } from './dispatch-batch.ts';
import type { DispatcherDeps } from './dispatcher-deps.ts';
import type { ClaimedOutboxEvent } from './outbox-claims.ts';
import type { KnownJob, SendOutcome } from './routes.ts';

/** SendMessageBatch takes at most 10 entries. */
export const EAGER_BATCH_MAX = 10;

interface WaitingRow {
  row: ClaimedOutboxEvent;
  job: KnownJob;
  signal: AbortSignal;
  resolve(published: boolean): void;
  reject(err: unknown): void;
}

/** The holder of every eager claim a dispatcher makes: its instance id and a ULID drawn once for it. */
const holders = new WeakMap<DispatcherDeps, string>();
export function eagerHolder(deps: DispatcherDeps): string {
  let holder = holders.get(deps);
  if (!holder) {
    holder = `${deps.instanceId.slice(0, 100)}:${newId()}`;
    holders.set(deps, holder);
  }
  return holder;
}

const batchers = new WeakMap<DispatcherDeps, EagerBatcher>();

/** The batcher of a dispatcher (one per DispatcherDeps, so per process for the default dispatcher). */
export function eagerBatcherOf(deps: DispatcherDeps): EagerBatcher {
  let batcher = batchers.get(deps);
  if (!batcher) {
    batcher = new EagerBatcher(deps);
    batchers.set(deps, batcher);
  }
  return batcher;
}

export class EagerBatcher {
  private sending = false;
  private sendingSince = 0;
  private releaseSending: (() => void) | undefined;
  private readonly waiting: WaitingRow[] = [];

  constructor(private readonly deps: DispatcherDeps) {}

  /** Rows waiting for the send in flight (for tests and diagnostics). */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** How long the send new rows would wait for has been in flight, in ms (0: none; for tests and diagnostics). */
  get sendingForMs(): number {
    return this.sending ? Date.now() - this.sendingSince : 0;
  }

  /**
   * Sends and settles a row this process claimed at its creation, alone or with others.
   * @returns true when the row is `published` under its claim.
   * @throws when the database fails while settling (the row is then released when its lease ends)
   */
  submit(row: ClaimedOutboxEvent, job: KnownJob, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ row, job, signal, resolve, reject });
      if (!this.sending) this.startNext();
      else if (this.sendingForMs > this.deps.policy.eagerWaitMs) this.releaseSending?.(); // it goes on; the rows behind it go now
    });
  }

  private startNext(): void {
    const batch = this.waiting.splice(0, EAGER_BATCH_MAX);
    if (batch.length === 0) return;
    this.sending = true;
    this.sendingSince = Date.now();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.sending = false;
      this.releaseSending = undefined;
      this.startNext();
    };
    this.releaseSending = release;
    this.run(batch, release).then(
      (published) => { for (const w of batch) w.resolve(published.has(w.row.id)); },
      (err: unknown) => { for (const w of batch) w.reject(err); },
    ).finally(release);
  }

  /** Sends the batch (releasing the send slot as soon as the sends are done), then settles it. */
  private async run(batch: WaitingRow[], release: () => void): Promise<Set<string>> {
    const live = batch.filter((w) => !w.signal.aborted);
    const late = batch.filter((w) => w.signal.aborted);
    const outcomes: SendOutcome[] = late.map((w) => ({ id: w.row.id, result: 'retry', error: describeAbort(w.signal) }));
    if (live.length > 0) {
      const signal = live.length === 1 ? live[0]!.signal : AbortSignal.any(live.map((w) => w.signal));
      // A send that outlives its budget (a route that ignores the abort) must not hold up the rows behind it.
      signal.addEventListener('abort', release, { once: true });
      const knownJobs = new Map(live.map((w) => [w.row.aggregateId, w.job]));
      outcomes.push(...await sendClaimed(this.deps, live.map((w) => w.row), { sql: this.deps.sql, signal, knownJobs }));
    }
    release();
    const published = new Set<string>();
    const byHolder = new Map<string, ClaimedOutboxEvent[]>();
    for (const { row } of batch) byHolder.set(row.lockedBy, [...byHolder.get(row.lockedBy) ?? [], row]);
    for (const [holder, rows] of byHolder) {
      const ids = new Set(rows.map((r) => r.id));
      const { publishedIds } = await settleLease(this.deps, rows, holder, outcomes.filter((o) => ids.has(o.id)));
      for (const id of publishedIds) published.add(id);
    }
    return published;
  }
}

function describeAbort(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return `not sent: ${reason instanceof Error ? reason.message : 'eager dispatch budget spent waiting for the send before it'}`;
}
