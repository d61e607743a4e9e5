/**
 * The one statement that appends a batch of chunks to a job's stream log (docs/streaming.md, "Batching and
 * fencing"): an `INSERT … SELECT` from the job's row, fenced by the lease (holder and version) AND by the job's
 * `statusSeq` as the attempt's lock left it. While that fence holds, no transition has happened since the lock,
 * and the lease holder is the only writer of the job's log: the chunks' `seq` (the lock's `statusSeq` + 1, + 2, …)
 * are the holder's to number, in memory, with no counter to update — one write statement per batch.
 *
 * The SELECT reads the AiJob row with a shared lock (a read inside a data-changing statement, REPEATABLE READ),
 * so a transition in flight (which holds the row exclusively) is waited for, then seen: its fence no longer
 * matches and nothing is inserted (lib/jobs/stream-seq.ts). A stale attempt appends nothing; a redelivered one
 * has a lease of its own and a segment of its own. The primary key (jobId, seq) refuses any duplicate `seq`.
 */
import type { LeaseFence } from '../jobs/lifecycle-repository.ts';
import type { SqlStatement } from '../db/sql.ts';

/** One chunk as stored: `content` is the text delta, or the item as JSON. */
export interface ChunkRow {
  seq: number;
  type: 'text' | 'item';
  field: string;
  itemIndex: number | null;
  content: string;
}

/** The segment a batch belongs to: the attempt's job, its lease, and `statusSeq` as the attempt's lock left it. */
export interface Segment {
  jobId: string;
  fence: LeaseFence;
  /** The `seq` of the segment's `running` status entry; its chunks follow it. */
  statusSeq: number;
  attempt: number;
}

const COLUMNS = '? AS seq, ? AS type, ? AS field, ? AS itemIndex, ? AS content';

/**
 * The append of `rows` (non-empty, `seq` ascending) under `segment`'s fence, every row stamped `at`.
 * Its affected-row count is `rows.length` when appended, 0 when the fence no longer holds.
 */
export function chunkAppendStatement(segment: Segment, rows: readonly ChunkRow[], at: Date): SqlStatement {
  if (rows.length === 0) throw new RangeError('a chunk append needs at least one row');
  const values = rows.flatMap((r) => [r.seq, r.type, r.field, r.itemIndex, r.content]);
  const derived = rows.map((_, i) => (i === 0 ? `SELECT ${COLUMNS}` : 'SELECT ?, ?, ?, ?, ?')).join(' UNION ALL ');
  return {
    sql: `INSERT INTO \`AiJobStreamChunk\` (jobId, seq, attempt, type, field, itemIndex, content, createdAt)
          SELECT j.id, v.seq, ?, v.type, v.field, v.itemIndex, v.content, ?
          FROM \`AiJob\` j JOIN (${derived}) v
          WHERE j.id = ? AND j.lifecycleStatus = 'running' AND j.lockedBy = ? AND j.leaseVersion = ? AND j.statusSeq = ?`,
    values: [segment.attempt, at, ...values, segment.jobId, segment.fence.holder, segment.fence.leaseVersion, segment.statusSeq],
  };
}

/**
 * After an append whose outcome is unknown (an error: the connection may have dropped after the commit): whether
 * its rows are in the log (matched by their `seq` range and their `createdAt`, which only that append wrote), and
 * whether the segment's fence still holds.
 */
export function appendOutcomeStatement(segment: Segment, firstSeq: number, lastSeq: number, at: Date): SqlStatement {
  return {
    sql: `SELECT (SELECT COUNT(*) FROM \`AiJobStreamChunk\` c WHERE c.jobId = j.id AND c.seq BETWEEN ? AND ? AND c.createdAt = ?) AS appended,
            (j.lifecycleStatus = 'running' AND j.lockedBy <=> ? AND j.leaseVersion = ? AND j.statusSeq = ?) AS fenced
          FROM \`AiJob\` j WHERE j.id = ?`,
    values: [firstSeq, lastSeq, at, segment.fence.holder, segment.fence.leaseVersion, segment.statusSeq, segment.jobId],
  };
}
