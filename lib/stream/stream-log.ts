/**
 * Reads of a job's stream log (docs/streaming.md, "Reading over HTTP"): a page of the entries after a position,
 * and the log's head (for the long-poll). The log is two tables sharing the job's `seq`: status entries are the
 * job's transition rows (./status-entries.ts), chunks are AiJobStreamChunk rows (./chunk-append.ts). Each read is
 * one round trip on the raw pool, through the primary key of the chunks and the (jobId, seq) index of the
 * transitions; nothing is read beyond the page.
 *
 * A page holds every entry between `after` and its last one. While the job runs, that is a run of consecutive
 * `seq`s from `after + 1`: the tables are read by separate statements (each its own snapshot), so one may show an
 * entry committed after the other's read; the page stops before the first missing `seq` (it is committed and
 * comes with the next page: `seq` order is commit order). Once the job is finished (its row is read first), every
 * entry is committed before the read, so a missing `seq` is one retention deleted (a chunk, docs/streaming.md):
 * the page steps over it.
 */
import type { AiJob } from '../db/client.ts';
import { getSqlPool, type SqlRunner } from '../db/sql-pool.ts';
import { isTerminal } from '../jobs/states.ts';
import type { StreamEntry, StreamPage } from './protocol.ts';
import { statusEntryOfTransition, type TransitionEntryRow } from './status-entries.ts';

/** Entries one page holds at most (a text entry holds at most 4,000 bytes: lib/stream/pending-chunks.ts). */
export const STREAM_PAGE_SIZE = 200;

/** A page of a job's log, with whose job it is (the caller decides who may read it). */
export interface StreamRead {
  job: Pick<AiJob, 'id' | 'userId' | 'jobType' | 'lifecycleStatus'>;
  page: StreamPage;
}

/** The log's head: its highest `seq` and whether the job is finished. */
export interface StreamHead {
  lastSeq: number;
  terminal: boolean;
}

const JOB_SQL = `SELECT id, userId, jobType, lifecycleStatus,
    GREATEST(statusSeq, COALESCE((SELECT MAX(c.seq) FROM \`AiJobStreamChunk\` c WHERE c.jobId = j.id), 0)) AS lastSeq
  FROM \`AiJob\` j WHERE j.id = ?`;
const TRANSITIONS_SQL = `SELECT seq, toStatus, errorCode, publicMessage, retryAt, attempt, createdAt
  FROM \`AiJobTransition\` WHERE jobId = ? AND seq > ? ORDER BY seq LIMIT ?`;
const CHUNKS_SQL = `SELECT seq, attempt, type, field, itemIndex, content, createdAt
  FROM \`AiJobStreamChunk\` WHERE jobId = ? AND seq > ? ORDER BY seq LIMIT ?`;

/** The reads' SQL, for the tests that EXPLAIN them (test/stream/stream-log.test.ts). */
export const STREAM_READ_SQL = { job: JOB_SQL, transitions: TRANSITIONS_SQL, chunks: CHUNKS_SQL } as const;

type JobRow = StreamRead['job'] & { lastSeq: number };
type ChunkRow = { seq: number; attempt: number; type: 'text' | 'item'; field: string; itemIndex: number | null; content: string; createdAt: Date };

/**
 * The entries after `after` (at most `limit`), or null when the job does not exist. The job row is read first:
 * when it is finished, every entry it will ever have is already committed, so `terminal` is exact for the page.
 */
export async function readStreamPage(jobId: string, after: number, opts: { limit?: number; pool?: SqlRunner } = {}): Promise<StreamRead | null> {
  const limit = opts.limit ?? STREAM_PAGE_SIZE;
  const [jobs, transitions, chunks] = (await (opts.pool ?? getSqlPool()).query(
    `${JOB_SQL};\n${TRANSITIONS_SQL};\n${CHUNKS_SQL}`, [jobId, jobId, after, limit, jobId, after, limit],
  )) as [JobRow[], TransitionEntryRow[], ChunkRow[]];
  const job = jobs[0];
  if (!job) return null;
  const merged = [
    ...transitions.map((t) => statusEntryOfTransition(t, job)),
    ...chunks.map(chunkEntry),
  ].sort((a, b) => a.seq - b.seq);
  const terminal = isTerminal(job.lifecycleStatus);
  const entries: StreamEntry[] = [];
  for (const entry of merged) {
    if (entries.length === limit || (!terminal && entry.seq !== after + entries.length + 1)) break;
    entries.push(entry);
  }
  const lastSeq = Math.max(Number(job.lastSeq), merged.at(-1)?.seq ?? 0);
  const read = entries.at(-1)?.seq ?? after;
  return {
    job: { id: job.id, userId: job.userId, jobType: job.jobType, lifecycleStatus: job.lifecycleStatus },
    page: { jobId, entries, lastSeq, hasMore: terminal ? entries.length === limit && read < lastSeq : read < lastSeq, terminal },
  };
}

/** The log's head, or null when the job does not exist: one primary-key read and one index dive. */
export async function readStreamHead(jobId: string, pool: SqlRunner = getSqlPool()): Promise<StreamHead | null> {
  const [job] = (await pool.query(JOB_SQL, [jobId])) as JobRow[];
  return job ? { lastSeq: Number(job.lastSeq), terminal: isTerminal(job.lifecycleStatus) } : null;
}

function chunkEntry(row: ChunkRow): StreamEntry {
  const base = { seq: Number(row.seq), attempt: Number(row.attempt), at: row.createdAt.toISOString() };
  if (row.type === 'text') return { ...base, type: 'text', field: row.field, delta: row.content };
  return { ...base, type: 'item', field: row.field, index: Number(row.itemIndex ?? 0), item: parseItem(row.content) };
}

function parseItem(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return null;
  }
}
