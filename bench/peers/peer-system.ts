/** A peer queue under the bench: submits one job, records its handler's instants, stops cleanly. */
import type { PeerPayload, PeerTimings } from './peer-task.ts';

export interface PeerSystem {
  name: string;
  timings: PeerTimings;
  /** Resolves once the job is durably enqueued. */
  submit(payload: PeerPayload): Promise<void>;
  stop(): Promise<void>;
}
