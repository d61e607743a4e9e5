/**
 * The client side of the peers bench (bench/peers.ts), shared by every system: `clients` concurrent loops
 * submitting `jobs` jobs, either as fast as each submission returns (unpaced) or offered at a fixed rate with
 * job i due at start + i / rate (paced; a loop that falls behind submits at once), and the summary figures.
 */
import type { IoCounts } from './cpu.ts';
import type { DbWrites } from './db-cost.ts';

/** Epoch milliseconds with sub-millisecond resolution (the Node clock; comparable across processes on one machine). */
export const nowMs = (): number => performance.timeOrigin + performance.now();

export interface LoadPlan {
  jobs: number;
  clients: number;
  /** Jobs per second offered; undefined for unpaced. */
  ratePerSecond?: number | undefined;
}

export interface LoadResult {
  /** Client clock before the first submission and after the last one returned. */
  firstSentMs: number;
  lastReturnedMs: number;
  /** Client send time of job i (the clock of the process that submitted). */
  sentMs: number[];
}

/** Runs the plan; `submit(i)` resolves once job i is accepted (durably enqueued). */
export async function offerLoad(plan: LoadPlan, submit: (i: number) => Promise<void>): Promise<LoadResult> {
  const sentMs = new Array<number>(plan.jobs).fill(NaN);
  const start = nowMs();
  const interval = plan.ratePerSecond ? 1000 / plan.ratePerSecond : 0;
  let next = 0;
  await Promise.all(Array.from({ length: plan.clients }, async () => {
    for (let i = next++; i < plan.jobs; i = next++) {
      const due = start + i * interval;
      const wait = due - nowMs();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      sentMs[i] = nowMs();
      await submit(i);
    }
  }));
  return { firstSentMs: start, lastReturnedMs: nowMs(), sentMs };
}

/** Nearest-rank percentile (the same rule as bench/e2e.ts). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** One system's figures for one load mode. */
export interface RunFigures {
  system: string;
  mode: 'unpaced' | 'paced';
  jobs: number;
  succeeded: number;
  /** Jobs ÷ (first submission → last job done). */
  jobsPerSecond: number;
  /** Jobs ÷ (first submission sent → last submission returned), client side. */
  submitPerSecond: number;
  offeredPerSecond?: number | undefined;
  toStartMs: number[];
  toDoneMs: number[];
  /**
   * Ours only: job row created → its enqueue message sent (the outbox row's publishedAt, set when SendMessageBatch
   * returned), which splits the hand-off into the API side and the queue-to-consumer side.
   */
  toSentMs?: number[];
  /**
   * A peer with an API in front only (./http-front.ts): created (before its create's transaction, after the request
   * was authenticated and validated) → start; the peer's hand-off as ours' created → startedAt is ours'.
   */
  createdToStartMs?: number[];
  /** Ours over HTTP only: the client's submit (`Date.now()` before the request) → startedAt (./ours.ts). */
  submitToStartMs?: number[];
  /** The database server's writes over the run (./db-cost.ts), with its CPU from `cpuPerJob`. */
  dbWrites?: { writes: DbWrites; source: string };
  /** CPU ms per job by process group (./cpu.ts), when /proc is there. */
  cpuPerJob?: Record<string, number>;
  /** Read/write system calls and context switches per job by process group (./cpu.ts), when /proc is there. */
  ioPerJob?: Record<string, IoCounts>;
  note?: string;
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');

/**
 * The mean of the middle half (25th to 75th percentile) of the finite values: a centre as robust as the p50 but
 * finer than ours' timestamps (DATETIME(3): every difference is whole milliseconds, and so is its p50).
 */
export function interquartileMean(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const middle = sorted.slice(Math.floor(sorted.length / 4), Math.ceil((sorted.length * 3) / 4));
  return middle.length === 0 ? NaN : middle.reduce((sum, v) => sum + v, 0) / middle.length;
}

/** One line per run, `key=value` pairs. */
export function formatFigures(f: RunFigures): string {
  const offered = f.offeredPerSecond ? ` offered_per_s=${f.offeredPerSecond.toFixed(1)}` : '';
  return `${f.system.padEnd(16)} ${f.mode.padEnd(7)} jobs=${f.jobs} ok=${f.succeeded} jobs_per_s=${f.jobsPerSecond.toFixed(1)}`
    + ` submit_per_s=${f.submitPerSecond.toFixed(1)}${offered}`
    + ` start_ms p50=${ms(percentile(f.toStartMs, 50))} p99=${ms(percentile(f.toStartMs, 99))} iqm=${ms(interquartileMean(f.toStartMs))}`
    + ` done_ms p50=${ms(percentile(f.toDoneMs, 50))} p99=${ms(percentile(f.toDoneMs, 99))}`
    + `${f.toSentMs ? ` sent_ms p50=${ms(percentile(f.toSentMs, 50))} p99=${ms(percentile(f.toSentMs, 99))} iqm=${ms(interquartileMean(f.toSentMs))}` : ''}`
    + `${f.createdToStartMs ? ` created_to_start_ms p50=${ms(percentile(f.createdToStartMs, 50))} p99=${ms(percentile(f.createdToStartMs, 99))} iqm=${ms(interquartileMean(f.createdToStartMs))}` : ''}`
    + `${f.submitToStartMs ? ` submit_to_start_ms p50=${ms(percentile(f.submitToStartMs, 50))} p99=${ms(percentile(f.submitToStartMs, 99))}` : ''}`
    + `${f.note ? `  (${f.note})` : ''}`;
}
