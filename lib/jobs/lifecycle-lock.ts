/**
 * Part of the lifecycle repository (./lifecycle-repository.ts): the lock, queued → running (or running →
 * running for a released or expired lease), as one script on the raw pool: the compare-and-set, its audit row,
 * and the locked row read back with the job's input snapshot.
 */
import type { AiJob, AiJobSnapshot, Db } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import type { SqlStatement } from '../db/sql.ts';
import { isDuplicateKey, runAtomically } from '../db/sql-pool.ts';
import { publishStatus } from '../stream/status-entries.ts';
import { explainRefusal } from './lifecycle-refusals.ts';
import { NEXT_STATUS_SEQ, UNHELD_NEXT_STATUS_SEQ } from './stream-seq.ts';

export const DEFAULT_LEASE_MS = 60_000;

/** The unique (jobId, seq) of transition rows: no two status entries of a job share a `seq`. */
const TRANSITION_SEQ_KEY = 'AiJobTransition_jobId_seq_key';

/**
 * Takes the lease for the next attempt: from `queued`, or from `running` when the lease was released or has
 * expired. Increments attemptCount and leaseVersion, sets startedAt on the first attempt, writes the audit row.
 * Never part of a caller's transaction (ADR-003 §1.6: the lock must be visible to other workers at once), so it
 * runs as its own transaction in one round trip on the raw pool; `db` only explains a refusal:
 * LeaseHeldError when another worker holds a live lease, StaleTransitionError when the job is terminal,
 * JobNotFoundError when it does not exist.
 */
export async function lockJob(
  db: Db, jobId: string, holder: string, opts: { leaseMs?: number; now?: Date } = {},
): Promise<AiJob> {
  return (await lockJobForAttempt(db, jobId, holder, opts)).job;
}

/**
 * {@link lockJob}, also returning the job's input snapshot read in the same round trip (the attempt runs on
 * it next; null when it is gone, e.g. removed by retention).
 */
export async function lockJobForAttempt(
  db: Db, jobId: string, holder: string, opts: { leaseMs?: number; now?: Date } = {},
): Promise<{ job: AiJob; snapshot: AiJobSnapshot | null }> {
  const now = opts.now ?? new Date();
  const lockUntil = new Date(now.getTime() + (opts.leaseMs ?? DEFAULT_LEASE_MS));
  const attempt = async (takeover: boolean): Promise<Record<string, unknown> | undefined> => {
    try {
      const results = await runAtomically(lockStatements(jobId, holder, now, lockUntil, takeover));
      return (results.at(-1) as Record<string, unknown>[])[0];
    } catch (err) {
      // Another claim by this holder at this very instant took the lease (two deliveries of one message on one
      // consumer): its audit row is at the `seq` this one would read back, and the unique (jobId, seq) refuses it.
      if (isDuplicateKey(err, TRANSITION_SEQ_KEY)) throw await explainRefusal(db, jobId, 'lockJob', now);
      throw err;
    }
  };
  // A queued or released job first (nearly always); a lease found expired, whose holder's chunks may follow
  // `statusSeq` (./stream-seq.ts), is taken over by a second script; anything else is refused, and said why.
  let row = await attempt(false);
  if (row && !Number(row[LOCKED]) && Number(row[EXPIRED])) row = await attempt(true);
  if (!row || !Number(row[LOCKED])) throw await explainRefusal(db, jobId, 'lockJob', now);
  const job: Record<string, unknown> = {};
  const snapshot: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    if (column.startsWith(SNAPSHOT_PREFIX)) snapshot[column.slice(SNAPSHOT_PREFIX.length)] = value;
    else if (column !== LOCKED && column !== EXPIRED) job[column] = value;
  }
  const locked = job as unknown as AiJob;
  publishStatus(locked); // `running`, the attempt's segment begins (committed: the script ended with COMMIT)
  return { job: locked, snapshot: snapshot.id == null ? null : toSnapshot(snapshot) };
}

/** The snapshot's columns, read with the locked row (a LEFT JOIN, so a job without one still locks). */
const SNAPSHOT_COLUMNS = ['id', 'jobId', 'schemaVersion', 'content', 'contentHash', 'redactionVersion', 'expiresAt', 'createdAt'] as const;
const SNAPSHOT_PREFIX = 'snapshot.';

/** A snapshot row as the raw driver returns it: `content` is JSON text on MariaDB, parsed JSON on MySQL 8. */
function toSnapshot(raw: Record<string, unknown>): AiJobSnapshot {
  const content = raw.content;
  return { ...(raw as unknown as AiJobSnapshot), content: typeof content === 'string' ? JSON.parse(content) : content };
}

/**
 * The compare-and-set of a job with no holder, or with `takeover` of any lockable job, an expired lease included
 * (it takes the `running` status entry's `seq`, reading the log's chunks only on a takeover: ./stream-seq.ts), the
 * audit row (only when the update matched; running → queued being illegal, attempt 1 is exactly the queued →
 * running edge), and the row read back with the job's snapshot (one joined read), in one script.
 *
 * Whether the update matched is read back from the row itself, not from session state (no `@variable`, no
 * `ROW_COUNT()`: RDS Proxy pins a session that sets a user variable, see docs/deploy.md): the audit insert and
 * the returned row require `lockedBy`, `lockedAt` and `lockUntil` to hold this claim's values. Our
 * transaction holds the row's lock from the update on, so nobody else can write them meanwhile. A row left with
 * exactly these values by an earlier claim is this holder's own lease of the same instant (one message
 * delivered twice at once to one consumer): that claim's audit row already holds the `seq` read here, so the
 * unique (jobId, seq) refuses this one and the whole script rolls back — the second delivery is turned away.
 */
function lockStatements(jobId: string, holder: string, now: Date, lockUntil: Date, takeover: boolean): SqlStatement[] {
  const ours = "id = ? AND lifecycleStatus = 'running' AND lockedBy = ? AND lockedAt = ? AND lockUntil = ?";
  const oursValues = [jobId, holder, now, lockUntil];
  // The takeover also takes an unheld job, with the general `seq`: a job released between the two scripts (the
  // reaper's release of the expired lease) is locked, not refused.
  const lockable = takeover
    ? { where: "(lifecycleStatus = 'queued' OR (lifecycleStatus = 'running' AND (lockedBy IS NULL OR lockUntil < ?)))", values: [now], seq: NEXT_STATUS_SEQ }
    : { where: "(lifecycleStatus = 'queued' OR (lifecycleStatus = 'running' AND lockedBy IS NULL))", values: [], seq: UNHELD_NEXT_STATUS_SEQ };
  return [
    {
      sql: `UPDATE \`AiJob\` SET lifecycleStatus = 'running', lockedBy = ?, lockedAt = ?, lockUntil = ?,
              leaseVersion = leaseVersion + 1, attemptCount = attemptCount + 1, startedAt = COALESCE(startedAt, ?), updatedAt = ?,
              ${lockable.seq}
            WHERE id = ? AND ${lockable.where}`,
      values: [holder, now, lockUntil, now, now, jobId, ...lockable.values],
    },
    {
      sql: `INSERT INTO \`AiJobTransition\` (id, jobId, fromStatus, toStatus, actor, reason, leaseVersion, seq, attempt, createdAt)
            SELECT ?, id, IF(attemptCount = 1, 'queued', 'running'), 'running', ?, CONCAT('attempt ', attemptCount), leaseVersion, statusSeq, attemptCount, ?
            FROM \`AiJob\` WHERE ${ours}`,
      values: [newId(), holder.slice(0, 128), now, ...oursValues],
    },
    {
      // The row whatever happened: whether this script locked it, and whether a holder's lease had expired.
      sql: `SELECT j.*, ${SNAPSHOT_COLUMNS.map((c) => `s.\`${c}\` AS \`${SNAPSHOT_PREFIX}${c}\``).join(', ')},
              (j.lifecycleStatus = 'running' AND j.lockedBy = ? AND j.lockedAt = ? AND j.lockUntil = ?) AS \`${LOCKED}\`,
              (j.lifecycleStatus = 'running' AND j.lockedBy IS NOT NULL AND j.lockUntil < ?) AS \`${EXPIRED}\`
            FROM \`AiJob\` j LEFT JOIN \`AiJobSnapshot\` s ON s.jobId = j.id
            WHERE j.id = ?`,
      values: [holder, now, lockUntil, now, jobId],
    },
  ];
}

/** The read-back's flags (not AiJob columns): this script locked the row; the row holds an expired lease. */
const LOCKED = 'lock.locked';
const EXPIRED = 'lock.expired';
