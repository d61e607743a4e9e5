/**
 * Part of the lifecycle repository: how a transition takes its position `seq` in the job's stream log
 * (docs/streaming.md, "How seq is allocated"). No statement of its own — each transition's compare-and-set on
 * the AiJob row also moves `statusSeq`, and its audit row records the value:
 *
 *   UPDATE `AiJob` SET …, statusSeq = GREATEST(statusSeq, <highest chunk seq of the job>) + 1 WHERE id = ? AND <its CAS>
 *   INSERT INTO `AiJobTransition` (…, seq) VALUES (…, (SELECT statusSeq FROM `AiJob` WHERE id = ?))
 *
 * Why the order of `seq` is the order of commits: every writer of a job's log holds the job's row lock from the
 * moment it takes its `seq` to its commit. A transition's UPDATE holds it exclusively; a chunk append
 * (lib/stream/chunk-append.ts) is one INSERT … SELECT from the AiJob row fenced by lease and `statusSeq`, which
 * under REPEATABLE READ (the server default, which the project keeps) reads that row with a shared lock. The
 * chunk subquery above is correlated to the locked row, so it runs after the lock is granted, and as a read inside
 * a data-changing statement it is a locking read too (it sees the latest committed chunks, never a snapshot).
 * So a transition waits for an append in flight and sees its chunks; an append waiting behind a transition
 * then finds `statusSeq` moved (and the lease fence changed) and inserts nothing.
 */
import type { SqlExpression } from '../db/sql.ts';

/** The SET item of an `UPDATE \`AiJob\`` (unaliased) that gives the transition the job's next `seq`. */
export const NEXT_STATUS_SEQ =
  'statusSeq = GREATEST(statusSeq, COALESCE((SELECT MAX(c.seq) FROM `AiJobStreamChunk` c WHERE c.jobId = `AiJob`.id), 0)) + 1';

/** The job's `statusSeq` as this transaction's UPDATE left it (the row is ours until the commit). */
export function currentStatusSeq(jobId: string): SqlExpression {
  return { expression: '(SELECT statusSeq FROM `AiJob` WHERE id = ?)', values: [jobId] };
}
