/**
 * The long-poll of `GET /api/ai/jobs/{jobId}/stream?after=…&wait=…` (docs/streaming.md, "The long-poll"): the
 * entries after `after` at once when there are some (or the job is finished), else the request is held until the
 * log's head moves past `after` or the wait ends, then answered with what is there (possibly nothing).
 *
 * It holds no database connection while it waits: each check is one short read on the pool (the log's head: one
 * primary-key read and one index dive, ./stream-log.ts), every {@link STREAM_POLL_INTERVAL_MS}, the connection
 * returned between checks. And it never starts a read it could not finish within its function's deadline: behind
 * RDS Proxy a read may wait up to the proxy's borrow timeout for a connection, so no read starts later than the
 * deadline less `readReserveMs` (default {@link DEFAULT_READ_RESERVE_MS}: the proxy's 10 s plus 1 s to answer).
 *
 * No imports but types: the CDK stack reads the constants here (infra/app-functions.ts).
 */
import type { StreamHead, StreamRead } from './stream-log.ts';

/** The longest `wait` a request may ask for, in seconds (API Gateway's integration timeout is 30 s). */
export const MAX_STREAM_WAIT_SECONDS = 20;
/** How often a held request looks at the log's head. */
export const STREAM_POLL_INTERVAL_MS = 500;
/**
 * The stream function's timeout (infra/app-functions.ts; the local runtime gives its handler the same deadline):
 * under API Gateway's 30 s, so the function always answers before the gateway gives up.
 */
export const STREAM_FUNCTION_TIMEOUT_SECONDS = 29;
/** Kept back from the function's deadline before a read may start: RDS Proxy's borrow timeout (10 s) + 1 s. */
export const DEFAULT_READ_RESERVE_MS = 11_000;
/** The environment variable that sets the read reserve (the stack sets it from the proxy's borrow timeout). */
export const READ_RESERVE_ENV = 'STREAM_READ_RESERVE_MS';

export interface LongPoll {
  after: number;
  waitMs: number;
  /** No read starts after this instant (epoch ms): the invocation's deadline less the read reserve. */
  readDeadline: number;
  pollIntervalMs: number;
  /** A page of the log after a position; null when the job does not exist. */
  read(after: number): Promise<StreamRead | null>;
  /** The log's head; null when the job does not exist (any more). */
  head(): Promise<StreamHead | null>;
  /** Whether the caller may read this job's log: refused before anything is held (the caller answers 404). */
  mayRead(job: StreamRead['job']): boolean;
  sleep?(ms: number): Promise<void>;
  now?(): number;
}

/** The page to answer, or null when the job does not exist or is not the caller's to read. */
export async function readStreamWaiting(p: LongPoll): Promise<StreamRead | null> {
  const now = p.now ?? Date.now;
  const sleep = p.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const until = Math.min(now() + p.waitMs, p.readDeadline);
  const first = await p.read(p.after);
  if (!first || !p.mayRead(first.job)) return null;
  if (first.page.entries.length > 0 || first.page.terminal || first.page.hasMore) return first;
  let lastSeq = first.page.lastSeq;
  for (let left = until - now(); left > 0; left = until - now()) {
    await sleep(Math.min(p.pollIntervalMs, left));
    if (now() > p.readDeadline) break;
    const head = await p.head();
    if (!head) return null;
    if (head.lastSeq > p.after || head.terminal) return p.read(p.after);
    lastSeq = head.lastSeq;
  }
  return { ...first, page: { ...first.page, lastSeq } };
}
