/**
 * `npm run bench:stream-fanout`: 1,000 concurrent subscribers (BENCH_FANOUT_SUBSCRIBERS) on the local realtime
 * hub watch one job; the publisher sends BENCH_FANOUT_PUSHES pushes of BENCH_FANOUT_ENTRIES entries (defaults
 * 100 × 5). Every subscriber must receive every seq once and in order: the bench exits 1 otherwise. Prints the
 * counts, the time to connect and subscribe everyone, and the time from the first publish to the last delivery.
 */
import { runFanout } from '../lib/dev/realtime-fanout.ts';

const number = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const result = await runFanout({
  subscribers: number('BENCH_FANOUT_SUBSCRIBERS', 1_000),
  pushes: number('BENCH_FANOUT_PUSHES', 100),
  entriesPerPush: number('BENCH_FANOUT_ENTRIES', 5),
});
console.log(JSON.stringify(result));
const ok = result.complete === result.subscribers && result.missing === 0 && result.duplicates === 0 && result.outOfOrder === 0;
console.log(`fanout_subscribers=${result.subscribers} complete=${result.complete} missing=${result.missing} duplicates=${result.duplicates} out_of_order=${result.outOfOrder}`);
process.exit(ok ? 0 : 1);
