/**
 * `npm run bench:scale`: does the engine stay flat as history grows? For each size N (BENCH_SIZES, default
 * `10000,1000000`) a child process seeds a database with N finished jobs (bench/scale-seed.ts), lets the
 * maintenance run catch up (rollups and retention, as months of scheduled runs would have), starts the local
 * runtime and times through its HTTP API: admin stats, the usage report, admin lists with filters, a user's
 * list, a job from create to succeeded; and directly one retention pass and one reaper pass (scheduled
 * functions, no route). Medians of BENCH_REPEATS (7). Also bytes per job before and after retention, and the
 * old full-count stats query for comparison (not in the ratio).
 * Last line: scale_ratio=<worst largest/smallest median across the timed calls>. Target ≤ 2.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const sizes = (process.env.BENCH_SIZES ?? '10000,1000000').split(',').map(Number);
type Result = { n: number; seedSeconds: number; catchUpSeconds: number; bytesPerJob: { seeded: number; afterRetention: number }; ms: Record<string, number> };

function runChild(n: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./scale-child.ts', import.meta.url)), String(n)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0) reject(new Error(`size ${n}: exit ${code}`));
      else resolve(JSON.parse(last) as Result);
    });
  });
}

const results: Result[] = [];
for (const n of sizes) {
  process.stderr.write(`seeding and timing N=${n}…\n`);
  results.push(await runChild(n));
}
const [small, large] = [results[0]!, results.at(-1)!];
const pad = (s: string, w: number) => s.padEnd(w);
console.log(`${pad('call (median ms)', 34)}${results.map((r) => pad(`N=${r.n}`, 14)).join('')}ratio`);
let worst = 0;
for (const name of Object.keys(small.ms)) {
  const ratio = (large.ms[name] ?? NaN) / (small.ms[name] ?? NaN);
  const counted = !name.startsWith('(');
  if (counted) worst = Math.max(worst, ratio);
  console.log(`${pad(name, 34)}${results.map((r) => pad((r.ms[name] ?? NaN).toFixed(1), 14)).join('')}${ratio.toFixed(2)}${counted ? '' : '  (reference, not counted)'}`);
}
for (const r of results) {
  console.log(`N=${r.n}: seeded in ${r.seedSeconds.toFixed(0)} s, maintenance catch-up ${r.catchUpSeconds.toFixed(0)} s, bytes/job ${r.bytesPerJob.seeded.toFixed(0)} seeded → ${r.bytesPerJob.afterRetention.toFixed(0)} after retention`);
}
console.log(`scale_ratio=${worst.toFixed(2)}`);
