/**
 * The engine's handle on one attempt's segment of the stream log. The engine opens one per attempt (after
 * the lease is taken) and feeds it the attempt's previews; the implementation batches them into log entries,
 * appends them fenced by the lease (a stale attempt appends nothing), and publishes each committed batch as a
 * realtime hint (./protocol.ts StreamPublisher).
 */
import type { AiJob } from '../db/client.ts';
import type { SqlStatement } from '../db/sql.ts';
import type { LeaseFence } from '../jobs/lifecycle-repository.ts';
import type { PreviewEvent } from './protocol.ts';

export interface AttemptStream {
  /** Buffers one preview; never throws and never waits (a failed append only loses preview, never the job). */
  preview(event: PreviewEvent): void;
  /** Appends what is still buffered and stops; resolves when that is durable or given up. Never throws. */
  close(): Promise<void>;
  /**
   * Instead of {@link close} when the attempt answered and will project: stops like close, except that the last
   * batch is not appended here but handed to the projection, which appends it in its own transaction ahead of
   * the success claim (one write transaction fewer per job, and no wait for the append interval). Appends in
   * flight, and batches beyond the last, are appended first. Undefined when nothing is left. Never throws. A
   * stream without it is closed.
   */
  handOver?(): Promise<FinalAppend | undefined>;
}

/** An attempt's last batch of previews, handed to the projection (see {@link AttemptStream.handOver}). */
export interface FinalAppend {
  /** The batch's append (./chunk-append.ts), fenced like every append: it inserts nothing once the fence fails. */
  statement: SqlStatement;
  /**
   * The `seq` of the batch's last chunk: the job's last `seq` once the statement commits (every earlier append of
   * the attempt has a known outcome by then), which the success claim takes its own from (lib/jobs/stream-seq.ts).
   */
  lastSeq: number;
  /** After the projection that carried the statement committed: the batch is in the log; its hint is published. */
  committed(): void;
  /** When the projection cannot carry it (another path, too long a script): appended on its own. Never throws. */
  appendAlone(): Promise<void>;
}

/** Opens the stream segment of the attempt `job.attemptCount` of `job`, under `fence`. */
export type OpenAttemptStream = (job: AiJob, fence: LeaseFence) => AttemptStream;

/** For engines without a stream log (and job types that stream nothing). */
export const NO_ATTEMPT_STREAM: AttemptStream = { preview: () => undefined, close: async () => undefined };
