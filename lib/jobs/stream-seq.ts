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
 *
 * A claim that knows its last seq: the success claim that carries its attempt's last batch of chunks
 * (lib/jobs/lifecycle-success.ts `FencedChunks`) takes `seq` = that batch's last `seq` + 1, with no read of the
 * chunks ({@link KNOWN_NEXT_STATUS_SEQ}). Exact, because under the claim's lease fence nothing but this attempt can
 * have written past the lock's `statusSeq`: every transition that moves `statusSeq` also moves the lease (a new
 * holder or version, no holder, or another state), so while the fence holds `statusSeq` is still the lock's, and
 * the only chunks above it are the attempt's own. The attempt hands its last batch over only once each earlier
 * append's outcome is known (lib/stream/attempt-appender.ts `handOver`), and the batch rides in the claim's
 * transaction under the same fence (its INSERT reads the job row with a shared lock the claim then upgrades), so
 * it is in the log exactly when the claim matches. The server's `MAX(seq)` is what this saves: an optimized
 * subquery per claim (~0.1 ms of the server's CPU, docs/performance.md).
 *
 * A lock of an unheld job: nothing follows `statusSeq` in the log of a job that is queued, or running with no
 * holder (released, parked), so its lock takes `statusSeq + 1` with no read of the chunks either
 * ({@link UNHELD_NEXT_STATUS_SEQ}). A chunk is only ever appended under a holder's fence (running, that holder and
 * lease version, the segment's `statusSeq`), and every UPDATE that ends a holding (to another state, or to no
 * holder) is a transition taking NEXT_STATUS_SEQ above the chunks so far, after which the holder's fence fails.
 * Only a lock that takes over an expired lease (a holder that stopped without a transition) reads them.
 */
import type { SqlExpression } from '../db/sql.ts';

/** The SET item of an `UPDATE \`AiJob\`` (unaliased) that gives the transition the job's next `seq`. */
export const NEXT_STATUS_SEQ =
  'statusSeq = GREATEST(statusSeq, COALESCE((SELECT MAX(c.seq) FROM `AiJobStreamChunk` c WHERE c.jobId = `AiJob`.id), 0)) + 1';

/** The SET item of a lock of a job with no holder (see the module comment). */
export const UNHELD_NEXT_STATUS_SEQ = 'statusSeq = statusSeq + 1';

/**
 * The SET item of a claim's `UPDATE \`AiJob\`` that knows the job's last `seq` (one `?`: that `seq`; see the
 * module comment). `GREATEST` keeps `seq` increasing should `statusSeq` ever be above it.
 */
export const KNOWN_NEXT_STATUS_SEQ = 'statusSeq = GREATEST(statusSeq, ?) + 1';

/** The job's `statusSeq` as this transaction's UPDATE left it (the row is ours until the commit). */
export function currentStatusSeq(jobId: string): SqlExpression {
  return { expression: '(SELECT statusSeq FROM `AiJob` WHERE id = ?)', values: [jobId] };
}
