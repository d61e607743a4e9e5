/**
 * An in-test AttemptStream (lib/stream/attempt-stream.ts) for engine tests: one segment per opened attempt,
 * recording the previews it was fed and how the job stood in the database when the engine closed it.
 */
import { getPrisma } from '../../lib/db/client.ts';
import type { OpenAttemptStream } from '../../lib/stream/attempt-stream.ts';
import type { PreviewEvent } from '../../lib/stream/protocol.ts';

export interface RecordedSegment {
  jobId: string;
  attempt: number;
  previews: PreviewEvent[];
  /** Previews fed after close (must stay 0). */
  afterClose: number;
  closed: boolean;
  /** `lifecycleStatus` when close was called: the attempt must not have settled yet. */
  statusAtClose?: string;
}

export interface PreviewRecorder {
  open: OpenAttemptStream;
  segments: RecordedSegment[];
  /** The segments of `jobId`, by attempt. */
  of(jobId: string): RecordedSegment[];
  /** The concatenated text previews of `field` in attempt `attempt` of `jobId`. */
  text(jobId: string, attempt: number, field: string): string;
  /** The item previews of `field` in attempt `attempt` of `jobId`, as [index, item]. */
  items(jobId: string, attempt: number, field: string): [number, unknown][];
}

export function previewRecorder(): PreviewRecorder {
  const segments: RecordedSegment[] = [];
  const segment = (jobId: string, attempt: number) => segments.find((s) => s.jobId === jobId && s.attempt === attempt);
  return {
    segments,
    open: (job) => {
      const seg: RecordedSegment = { jobId: job.id, attempt: job.attemptCount, previews: [], afterClose: 0, closed: false };
      segments.push(seg);
      return {
        preview: (event) => {
          if (seg.closed) seg.afterClose += 1;
          else seg.previews.push(event);
        },
        close: async () => {
          const row = await getPrisma().aiJob.findUniqueOrThrow({ where: { id: job.id }, select: { lifecycleStatus: true } });
          seg.statusAtClose = row.lifecycleStatus;
          seg.closed = true;
        },
      };
    },
    of: (jobId) => segments.filter((s) => s.jobId === jobId).sort((a, b) => a.attempt - b.attempt),
    text: (jobId, attempt, field) =>
      (segment(jobId, attempt)?.previews ?? []).flatMap((p) => (p.type === 'text' && p.field === field ? [p.delta] : [])).join(''),
    items: (jobId, attempt, field) =>
      (segment(jobId, attempt)?.previews ?? []).flatMap((p): [number, unknown][] => (p.type === 'item' && p.field === field ? [[p.index, p.item]] : [])),
  };
}
