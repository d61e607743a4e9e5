/**
 * The engine's handle on one attempt's segment of the stream log. The engine opens one per attempt (after
 * the lease is taken) and feeds it the attempt's previews; the implementation batches them into log entries,
 * appends them fenced by the lease (a stale attempt appends nothing), and publishes each committed batch as a
 * realtime hint (./protocol.ts StreamPublisher).
 */
import type { AiJob } from '../db/client.ts';
import type { LeaseFence } from '../jobs/lifecycle-repository.ts';
import type { PreviewEvent } from './protocol.ts';

export interface AttemptStream {
  /** Buffers one preview; never throws and never waits (a failed append only loses preview, never the job). */
  preview(event: PreviewEvent): void;
  /** Appends what is still buffered and stops; resolves when that is durable or given up. Never throws. */
  close(): Promise<void>;
}

/** Opens the stream segment of the attempt `job.attemptCount` of `job`, under `fence`. */
export type OpenAttemptStream = (job: AiJob, fence: LeaseFence) => AttemptStream;

/** For engines without a stream log (and job types that stream nothing). */
export const NO_ATTEMPT_STREAM: AttemptStream = { preview: () => undefined, close: async () => undefined };
