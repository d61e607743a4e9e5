/**
 * Retention of the stream log's chunks (docs/data-at-scale.md, "Retention"): a job's chunks — the preview of its
 * output as it was written — are deleted `streamDays` after the job finished. Its status entries are its
 * transition rows, its audit trail: they stay as long as the job. (A reader of such a job gets its status entries
 * and a final page with `seq` gaps where the chunks were: lib/stream/stream-log.ts.)
 *
 * Through the chunks' primary key (jobId, seq) from its start: job ids are ULIDs minted at creation, so every job
 * finished before the cutoff has an id below {@link lowestIdAt}(cutoff), and the chunks retention has already
 * deleted are gone from the front of the key. What a pass reads is the chunks it deletes, plus the chunks of the
 * few jobs created before the cutoff that finished after it (or still run), which it steps over. Each batch deletes
 * the rows it selected, as ranges of one job's `seq`s on the primary key.
 */
import type { PrismaDb } from '../db/client.ts';
import { lowestIdAt } from '../db/ids.ts';
import { deleteInBatches, type BatchLoop } from './batches.ts';

/** Jobs one delete names at most (its statement stays far under 16 KB). */
const MAX_JOBS_PER_DELETE = 100;

/** Deletes the chunks of jobs that finished before `cutoff`; returns rows deleted. */
export async function deleteStreamChunks(db: PrismaDb, loop: BatchLoop, cutoff: Date): Promise<number> {
  const idBound = lowestIdAt(cutoff);
  return deleteInBatches(db, loop,
    async (limit) => {
      const rows = await db.$queryRawUnsafe<{ jobId: string; seq: number }[]>(
        `SELECT c.jobId, c.seq FROM \`AiJobStreamChunk\` c JOIN \`AiJob\` j ON j.id = c.jobId
         WHERE c.jobId < ? AND j.lifecycleStatus IN ('succeeded', 'failed', 'cancelled') AND j.finishedAt < ?
         ORDER BY c.jobId, c.seq LIMIT ${limit}`, idBound, cutoff);
      return rows.map((r) => `${r.jobId}:${Number(r.seq)}`);
    },
    (tx, keys) => {
      const ranges = seqRanges(keys).slice(0, MAX_JOBS_PER_DELETE);
      return tx.$executeRawUnsafe(
        `DELETE t FROM \`AiJobStreamChunk\` t FORCE INDEX (\`PRIMARY\`) WHERE ${ranges.map(() => '(t.jobId = ? AND t.seq BETWEEN ? AND ?)').join(' OR ')}`,
        ...ranges.flatMap((r) => [r.jobId, r.from, r.to]),
      );
    });
}

/** `jobId:seq` keys (in primary-key order) as one `seq` range per job: every row of a job between them was selected. */
function seqRanges(keys: readonly string[]): { jobId: string; from: number; to: number }[] {
  const ranges: { jobId: string; from: number; to: number }[] = [];
  for (const key of keys) {
    const at = key.lastIndexOf(':');
    const [jobId, seq] = [key.slice(0, at), Number(key.slice(at + 1))];
    const last = ranges.at(-1);
    if (last?.jobId === jobId) last.to = seq;
    else ranges.push({ jobId, from: seq, to: seq });
  }
  return ranges;
}
