/**
 * The stream log's appender (docs/streaming.md, "Batching and fencing"): the engine opens one per attempt
 * ({@link createAttemptStreams} is the engine's `openAttemptStream`) and feeds it the attempt's previews. It
 * batches them and appends each batch as ONE statement (./chunk-append.ts), fenced by the lease and by the
 * attempt's `statusSeq`, then publishes the committed batch as a realtime hint.
 *
 * Batching: a batch is appended once it is {@link APPEND_INTERVAL_MS} old or holds {@link FLUSH_AT_CHARS}
 * characters, whichever comes first — but never sooner than {@link APPEND_INTERVAL_MS} after the previous append
 * started, and never while one is in flight. So a streaming job costs at most 1000 / 200 = 5 write statements a
 * second, and a preview reaches the log at most ~200 ms (plus one append) after it was written. Consecutive text of
 * one field becomes one entry. A statement carries at most {@link MAX_APPEND_BYTES} of content (under RDS Proxy's
 * 16 KB pinning threshold); more waits for the next append.
 *
 * Failures: an append the fence refuses (the lease was lost, the job moved on) stops the appender: it appends
 * nothing more. An append that fails with an error is checked (was it committed after all? does the fence still
 * hold?) and tried again at the next turn with the same `seq`s; after {@link MAX_APPEND_FAILURES} failures in a
 * row the appender stops. Nothing here ever throws into the attempt or makes it wait, but `close()`: losing a
 * preview never costs the job.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { AiJob } from '../db/client.ts';
import { affectedRows, getSqlPool, type SqlRunner } from '../db/sql-pool.ts';
import type { LeaseFence } from '../jobs/lifecycle-repository.ts';
import type { AttemptStream, FinalAppend, OpenAttemptStream } from './attempt-stream.ts';
import { appendOutcomeStatement, chunkAppendStatement, type Segment } from './chunk-append.ts';
import { publishPush } from './publisher-registry.ts';
import type { PreviewEvent, StreamPublisher } from './protocol.ts';
import { pendingChunks, takeBatch, type Batch, type PendingChunks } from './pending-chunks.ts';

/** The least time between two appends of one attempt (and the most a preview waits for its batch). */
export const APPEND_INTERVAL_MS = 200;
/** N: a batch this many characters long (text, plus items as JSON) is appended as soon as the interval allows. */
export const FLUSH_AT_CHARS = 512;
/** Content bytes one append statement carries at most (the statement stays under 16 KB). */
export const MAX_APPEND_BYTES = 12_000;
/** Failed appends in a row after which an attempt's appender gives up. */
export const MAX_APPEND_FAILURES = 3;

export interface AttemptStreamOptions {
  /** The raw pool (default: the process's, lib/db/sql-pool.ts). */
  pool?: () => SqlRunner;
  /** Default: the process's registered publisher, read at each publish (./publisher-registry.ts). */
  publisher?: StreamPublisher;
  logger?: Pick<Logger, 'warn'>;
  appendIntervalMs?: number;
  flushAtChars?: number;
}

/** The engine's `openAttemptStream`: one appender per attempt, on the segment its lock began. */
export function createAttemptStreams(options: AttemptStreamOptions = {}): OpenAttemptStream {
  return (job: AiJob, fence: LeaseFence): AttemptStream => new AttemptAppender(
    { jobId: job.id, fence, statusSeq: job.statusSeq, attempt: job.attemptCount }, job.userId, options,
  );
}

class AttemptAppender implements AttemptStream {
  private readonly pending: PendingChunks = pendingChunks();
  private readonly interval: number;
  private readonly flushAt: number;
  private nextSeq: number;
  private lastAppendAt = Number.NEGATIVE_INFINITY;
  private timer: { handle: NodeJS.Timeout; at: number } | undefined;
  private inFlight: Promise<void> | undefined;
  /** A batch whose append failed: appended again, with the same `seq`s and time, before anything else. */
  private unsettled: Batch | undefined;
  private failures = 0;
  private stopped = false;
  private closed = false;

  constructor(private readonly segment: Segment, private readonly userId: string, private readonly options: AttemptStreamOptions) {
    this.interval = options.appendIntervalMs ?? APPEND_INTERVAL_MS;
    this.flushAt = options.flushAtChars ?? FLUSH_AT_CHARS;
    this.nextSeq = segment.statusSeq + 1;
  }

  preview(event: PreviewEvent): void {
    if (this.stopped || this.closed) return;
    try {
      if (!this.pending.add(event, Date.now())) this.options.logger?.warn('stream preview too large to store; dropped', { jobId: this.segment.jobId, field: event.field });
      this.schedule();
    } catch {
      // A preview that cannot be buffered (an item that cannot be serialised) is lost; the attempt goes on.
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    await this.drain(() => false);
  }

  async handOver(): Promise<FinalAppend | undefined> {
    this.closed = true;
    this.clearTimer();
    // Appended here: an append in flight, one to be tried again, and whatever will not fit in the last batch.
    await this.drain(() => !this.unsettled && this.pending.fitsOneBatch(MAX_APPEND_BYTES));
    if (this.stopped) return undefined;
    const batch = takeBatch(this.pending, this.nextSeq, this.segment.attempt, new Date(), MAX_APPEND_BYTES);
    if (!batch) return undefined;
    return {
      statement: chunkAppendStatement(this.segment, batch.rows, batch.at),
      lastSeq: batch.rows.at(-1)!.seq,
      committed: () => this.committed(batch),
      appendAlone: () => {
        this.unsettled = batch;
        return this.drain(() => false);
      },
    };
  }

  /** Appends (each at its interval) until nothing is left, the appender stopped, or `done` says so. Never throws. */
  private async drain(done: () => boolean): Promise<void> {
    try {
      while (!this.stopped && (this.inFlight || this.unsettled || !this.pending.isEmpty())) {
        if (this.inFlight) {
          await this.inFlight;
          continue;
        }
        if (done()) return;
        const wait = this.lastAppendAt + this.interval - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        await this.flush();
      }
    } catch {
      // Never throws: what could not be appended is only preview.
    }
  }

  /** Sets the timer for the next append (see the module comment for when that is). */
  private schedule(): void {
    if (this.stopped || this.closed || this.inFlight || (!this.unsettled && this.pending.isEmpty())) return;
    const now = Date.now();
    const ready = this.unsettled || this.pending.chars() >= this.flushAt ? now : this.pending.since() + this.interval;
    const at = Math.max(ready, this.lastAppendAt + this.interval);
    if (this.timer && this.timer.at <= at) return;
    this.clearTimer();
    this.timer = { at, handle: setTimeout(() => { this.timer = undefined; void this.flush(); }, Math.max(0, at - now)) };
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer.handle);
    this.timer = undefined;
  }

  private flush(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    if (this.stopped) return Promise.resolve();
    const batch = this.unsettled ?? takeBatch(this.pending, this.nextSeq, this.segment.attempt, new Date(), MAX_APPEND_BYTES);
    if (!batch) return Promise.resolve();
    this.lastAppendAt = Date.now();
    this.inFlight = this.append(batch).finally(() => {
      this.inFlight = undefined;
      this.schedule();
    });
    return this.inFlight;
  }

  private async append(batch: Batch): Promise<void> {
    const pool = (this.options.pool ?? getSqlPool)();
    try {
      const statement = chunkAppendStatement(this.segment, batch.rows, batch.at);
      const appended = affectedRows(await pool.query(statement.sql, statement.values));
      if (appended === batch.rows.length) return this.committed(batch);
      if (appended === 0) return this.stop();
    } catch (err) {
      this.options.logger?.warn('stream append failed', { jobId: this.segment.jobId, error: err instanceof Error ? err.name : typeof err });
    }
    await this.settleUnknown(batch, pool);
  }

  /** After a failed append: committed after all, refused by the fence, or to be tried again (bounded). */
  private async settleUnknown(batch: Batch, pool: SqlRunner): Promise<void> {
    this.failures += 1;
    try {
      const check = appendOutcomeStatement(this.segment, batch.rows[0]!.seq, batch.rows.at(-1)!.seq, batch.at);
      const [row] = (await pool.query(check.sql, check.values)) as { appended: number; fenced: number }[];
      if (Number(row?.appended) === batch.rows.length) return this.committed(batch);
      if (!row || Number(row.fenced) !== 1) return this.stop();
    } catch {
      // Unknown still: counted as a failure.
    }
    if (this.failures >= MAX_APPEND_FAILURES) {
      this.options.logger?.warn('stream appends keep failing; the attempt streams nothing more', { jobId: this.segment.jobId, failures: this.failures });
      this.stop();
      return;
    }
    this.unsettled = batch;
  }

  private committed(batch: Batch): void {
    this.unsettled = undefined;
    this.failures = 0;
    this.nextSeq = batch.rows.at(-1)!.seq + 1;
    publishPush({ userId: this.userId, jobId: this.segment.jobId, entries: batch.entries }, this.options.publisher);
  }

  /** Appends nothing more: the fence no longer holds (or appends keep failing). */
  private stop(): void {
    this.stopped = true;
    this.unsettled = undefined;
    this.pending.clear();
    this.clearTimer();
  }
}
