/**
 * bench:peers' closing lines: each headline figure per round on the `rounds=` line, then the median of the
 * rounds with its range, in the order the lead reads them; a figure whose peer did not run says n/a.
 */
import { describe, expect, it } from 'vitest';
import type { RunFigures } from '../../bench/peers/load.ts';
import { closingLines, HEADLINES, roundHeadlines, type RoundFigures } from '../../bench/peers/summary.ts';

function run(o: Partial<RunFigures> & Pick<RunFigures, 'system'>): RunFigures {
  return { mode: 'unpaced', jobs: 100, succeeded: 100, jobsPerSecond: 100, submitPerSecond: 100, toStartMs: [10], toDoneMs: [20], ...o };
}

/** A round where ours does `oursJobsPerSecond` and graphile-worker 200 jobs/s, with fixed latencies and CPU. */
function round(oursJobsPerSecond: number, writeTxPerJob: number): RoundFigures {
  return {
    oneUser: run({ system: 'ours-http', jobsPerSecond: oursJobsPerSecond, cpuPerJob: { 'runtime.main': 4, mariadb: 4, emulators: 2, bench: 1 } }),
    fewUsers: run({ system: 'ours-http-few', jobsPerSecond: oursJobsPerSecond * 1.1 }),
    oursShare: run({ system: 'ours-http', mode: 'paced', toStartMs: [8, 9, 10], submitToStartMs: [14, 15, 16], offeredPerSecond: 80 }),
    graphile: run({ system: 'graphile-worker', jobsPerSecond: 200, cpuPerJob: { bench: 3, postgres: 4, emulators: 1 } }),
    graphileShare: run({ system: 'graphile-worker', mode: 'paced', toStartMs: [5], offeredPerSecond: 160 }),
    writeTxPerJob,
  };
}

describe('the peers bench closing lines', () => {
  it('derives each ratio of a round from its runs', () => {
    const expected = {
      peer_ratio: 0.6,
      peer_ratio_few_users: 0.66,
      share_handoff_ratio: 9 / 5, // created → startedAt p50 (nearest rank of [8, 9, 10]) ÷ graphile-worker's submit → start p50
      share_submit_ratio: 15 / 5,
      cpu_ratio: 9 / 8, // ours without the emulators (4 + 4 + 1) ÷ graphile-worker's total (3 + 4 + 1)
      db_cpu_ratio: 1,
      write_tx_per_job: 3.8,
    };
    const got = roundHeadlines(round(120, 3.8));
    expect(Object.keys(got)).toEqual([...HEADLINES]);
    for (const [name, value] of Object.entries(expected)) expect(got[name as keyof typeof got], name).toBeCloseTo(value, 10);
  });

  it('ends with every headline in order, the median of the rounds and their range', () => {
    const lines = closingLines([round(100, 3.9), round(140, 3.7), round(120, 3.8)], 0.8);
    const last = lines.slice(-HEADLINES.length);
    expect(last.map((l) => l.split('=')[0])).toEqual([...HEADLINES]);
    expect(last[0]).toBe('peer_ratio=0.60 range=0.50..0.70');
    expect(last[6]).toBe('write_tx_per_job=3.80 range=3.70..3.90');
    expect(lines.find((l) => l.startsWith('rounds='))).toContain('peer_ratio_by_round=0.50,0.70,0.60');
  });

  it('says n/a for the ratios to graphile-worker when it did not run', () => {
    const alone = { ...round(100, 3.9), graphile: undefined, graphileShare: undefined };
    const lines = closingLines([alone], 0.8);
    expect(lines).toContain('peer_ratio=n/a');
    expect(lines).toContain('share_submit_ratio=n/a');
    expect(lines.at(-1)).toBe('write_tx_per_job=3.90 range=3.90..3.90');
  });
});
