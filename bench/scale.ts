/**
 * `npm run bench:scale`: does the engine stay flat as history grows?
 *
 * For each size N (BENCH_SIZES, default `10000,1000000`) a child process (bench/scale-child.ts) seeds a database
 * with N finished jobs (bench/scale-seed.ts: the last 8 days of traffic are the same at every size, history
 * before them grows with N), lets the maintenance run catch up (rollups and retention, as months of scheduled
 * runs would have), starts the local runtime and waits. Then the calls are timed — through the HTTP API: admin
 * stats, the usage reports, admin lists with filters, a user's lists, a job from create to succeeded; directly:
 * one retention pass and one reaper pass (scheduled functions, no route); and the old full-count stats
 * query for comparison (not in the ratio).
 *
 * Method (the machine is shared and noisy, so both sizes are measured under the same conditions):
 * - both children stay up, each in the same state (seeded, caught up, runtime started, same calls made);
 * - warm-up: every call BENCH_WARMUP times (3) at every size, untimed;
 * - then BENCH_REPEATS rounds (15): in each, every call once at each size, one size right after the other,
 *   the order of sizes alternating between rounds; a call is timed inside its child (no IPC in the figure);
 * - the figure of a call at a size is the median of its rounds; the ratio is largest size / smallest size.
 * - rows read: the rows the call's statements read (MariaDB user statistics of the database user the runtime
 *   and the direct calls use; bench/scale-child.ts): the work itself, which load does not change.
 * Printed: each call at each size, the ratio and the rows read, seed and catch-up time, bytes per job (data + indexes of the
 * job's tables, InnoDB's figures) before and after retention, and a last line
 * `scale_ratio=<worst ratio across the counted calls>`. Target ≤ 2.
 * BENCH_KEEP=1 keeps the databases (`aijobs_bench_scale_<N>`) for EXPLAIN afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const sizes = (process.env.BENCH_SIZES ?? '10000,1000000').split(',').map(Number);
const repeats = Number(process.env.BENCH_REPEATS ?? 15);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);

interface Ready { n: number; calls: string[]; seedSeconds: number; catchUpSeconds: number; bytesPerJob: { seeded: number; afterRetention: number } }

/** A child that answers one JSON line per line it is sent. */
class SizeChild {
  readonly #child: ChildProcess;
  readonly #lines: AsyncIterator<string>;
  constructor(n: number) {
    this.#child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./scale-child.ts', import.meta.url)), String(n)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const rl: Interface = createInterface({ input: this.#child.stdout! });
    this.#lines = rl[Symbol.asyncIterator]();
  }

  async next<T>(): Promise<T> {
    for (;;) {
      const { value, done } = await this.#lines.next();
      if (done) throw new Error('a size child exited early (see its error above)');
      if (value.startsWith('{')) return JSON.parse(value) as T;
    }
  }

  async time(call: string): Promise<{ ms: number; rows: number | null }> {
    this.#child.stdin!.write(`${JSON.stringify({ call })}\n`);
    return this.next<{ ms: number; rows: number | null }>();
  }

  async quit(): Promise<void> {
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.stdin!.write(`${JSON.stringify({ quit: true })}\n`);
    await exited;
  }
}

const children: SizeChild[] = [];
const ready: Ready[] = [];
for (const n of sizes) {
  process.stderr.write(`seeding N=${n}…\n`);
  const child = new SizeChild(n);
  children.push(child);
  ready.push(await child.next<Ready>());
}
const calls = ready[0]!.calls;
const times = ready.map(() => Object.fromEntries(calls.map((c) => [c, [] as number[]])));
const rows = ready.map(() => Object.fromEntries(calls.map((c) => [c, [] as number[]])));

process.stderr.write(`timing: ${warmup} warm-up calls, then ${repeats} rounds…\n`);
for (const call of calls) for (let i = 0; i < warmup; i += 1) for (const child of children) await child.time(call);
for (let round = 0; round < repeats; round += 1) {
  const order = round % 2 === 0 ? children.map((_, k) => k) : children.map((_, k) => k).reverse();
  for (const call of calls) {
    for (const k of order) {
      const t = await children[k]!.time(call);
      times[k]![call]!.push(t.ms);
      if (t.rows !== null) rows[k]![call]!.push(t.rows);
    }
  }
}
await Promise.all(children.map((c) => c.quit()));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pad = (s: string, w: number) => s.padEnd(w);
const rowsOf = (k: number, call: string) => (rows[k]![call]!.length > 0 ? String(median(rows[k]![call]!)) : '-');
console.log(`${pad('call (median ms)', 34)}${ready.map((r) => pad(`N=${r.n}`, 14)).join('')}${pad('ratio', 8)}rows read (median) ${ready.map((r) => `N=${r.n}`).join(' / ')}`);
let worst = 0;
for (const call of calls) {
  const medians = times.map((t) => median(t[call]!));
  const ratio = medians.at(-1)! / medians[0]!;
  const counted = !call.startsWith('(');
  if (counted) worst = Math.max(worst, ratio);
  const read = ready.map((_, k) => rowsOf(k, call)).join(' / ');
  console.log(`${pad(call, 34)}${medians.map((m) => pad(m.toFixed(1), 14)).join('')}${pad(ratio.toFixed(2), 8)}${read}${counted ? '' : '  (reference, not counted)'}`);
}
for (const r of ready) {
  console.log(`N=${r.n}: seeded in ${r.seedSeconds.toFixed(0)} s, maintenance catch-up ${r.catchUpSeconds.toFixed(0)} s, bytes/job ${r.bytesPerJob.seeded.toFixed(0)} seeded → ${r.bytesPerJob.afterRetention.toFixed(0)} after retention`);
}
console.log(`scale_ratio=${worst.toFixed(2)}`);
