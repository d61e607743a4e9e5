/**
 * bench:peers' closing lines: each headline figure per round on the `rounds=` line, then the median of the
 * rounds with its range, in the order the lead reads them; a figure whose peer did not run says n/a.
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { RunFigures } from '../../bench/peers/load.ts';
import { interquartileMean } from '../../bench/peers/load.ts';
import {
  closingLines, HEADLINES, KEPT_HEADLINES, keptHeadlines, LOAD_HEADLINES, loadHeadlines, machineBusy, roundHeadlines, sameLoadRate, type RoundFigures,
} from '../../bench/peers/summary.ts';

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

  it('prints the ratios to graphile-worker-kept before the headlines, only when it ran', () => {
    const withKept = (ours: number, postgres: number): RoundFigures => ({
      ...round(ours, 3.8),
      graphileKept: run({ system: 'graphile-worker-kept', jobsPerSecond: 150, cpuPerJob: { bench: 3, postgres, emulators: 1 } }),
      // Paced at its own share: submit → start p50 (nearest rank of [4, 6, 9]) 6 ms, against ours' 9 (created → startedAt) and 15 (submit → startedAt).
      graphileKeptShare: run({ system: 'graphile-worker-kept', mode: 'paced', toStartMs: [9, 4, 6], offeredPerSecond: 120 }),
    });
    // ours 100, 120, 140 jobs/s ÷ 150; MariaDB 4 ÷ PostgreSQL 4, 5, 2; ours without the emulators 9 ÷ the kept peer's total 8, 9, 6.
    expect(keptHeadlines(withKept(100, 4))).toEqual({
      peer_ratio_kept: 100 / 150, db_cpu_ratio_kept: 1, cpu_ratio_kept: 9 / 8, share_handoff_ratio_kept: 9 / 6, share_submit_ratio_kept: 15 / 6,
      cpu_ratio_kept_no_emulators: 9 / 7, // the kept peer's total 8 without its emulators' 1
    });
    const lines = closingLines([withKept(100, 4), withKept(120, 5), withKept(140, 2)], 0.8);
    const kept = lines.slice(-HEADLINES.length - KEPT_HEADLINES.length, -HEADLINES.length);
    expect(kept).toEqual([
      'peer_ratio_kept=0.80 range=0.67..0.93', 'db_cpu_ratio_kept=1.00 range=0.80..2.00', 'cpu_ratio_kept=1.13 range=1.00..1.50',
      'share_handoff_ratio_kept=1.50 range=1.50..1.50', 'share_submit_ratio_kept=2.50 range=2.50..2.50',
      'cpu_ratio_kept_no_emulators=1.29 range=1.13..1.80', // 9 ÷ 7, 8, 5
    ]);
    expect(lines.find((l) => l.startsWith('kept_detail'))).toContain('graphile-worker-kept jobs/s=150.0 cpu total=8.00 without emulators=7.00');
    expect(lines.find((l) => l.startsWith('rounds='))).toContain('db_cpu_ratio_kept_by_round=1.00,0.80,2.00');
    expect(lines.find((l) => l.startsWith('share_detail'))).toContain('graphile_kept_rate=120.0,120.0,120.0 graphile_kept_start_p50_ms=6.0,6.0,6.0');
    const without = closingLines([round(100, 3.9)], 0.8);
    expect(without.some((l) => l.startsWith('db_cpu_ratio_kept') || l.startsWith('kept_detail'))).toBe(false);
    expect(without.find((l) => l.startsWith('share_detail'))).not.toContain('graphile_kept');
  });

  it("divides ours' hand-off by a peer's created → start when an API is in front of it, the submit ratio by its submit → start", () => {
    const r: RoundFigures = {
      ...round(120, 3.8),
      graphileKept: run({ system: 'graphile-worker-kept', jobsPerSecond: 150, cpuPerJob: { bench: 3, postgres: 4, emulators: 1 } }),
      // Over its HTTP front: client submit → start p50 6 ms, of it created (after the token and input checks) → start 3 ms.
      graphileKeptShare: run({ system: 'graphile-worker-kept', mode: 'paced', toStartMs: [5, 6, 7], createdToStartMs: [2, 3, 4], offeredPerSecond: 120 }),
      oursKeptLoad: run({ system: 'ours-http-kload', mode: 'paced', toStartMs: [6], submitToStartMs: [12], offeredPerSecond: 50 }),
    };
    // ours paced: created → startedAt p50 9, submit → startedAt p50 15 (./round).
    expect(keptHeadlines(r)).toMatchObject({ share_handoff_ratio_kept: 9 / 3, share_submit_ratio_kept: 15 / 6 });
    expect(loadHeadlines(r)).toMatchObject({ share_handoff_ratio_kept_same_load: 6 / 3, share_submit_ratio_kept_same_load: 12 / 6 });
    // graphile-worker's client calls its create itself: its hand-off stays submit → start.
    expect(roundHeadlines(r).share_handoff_ratio).toBeCloseTo(9 / 5, 10);
    const lines = closingLines([r], 0.8);
    expect(lines.find((l) => l.startsWith('share_detail'))).toContain('graphile_kept_start_p50_ms=6.0 graphile_kept_created_to_start_p50_ms=3.0');
    expect(lines.find((l) => l.startsWith('load_detail'))).toContain('graphile_kept_start_p50_ms=6.0 graphile_kept_created_to_start_p50_ms=3.0');
    expect(lines.find((l) => l.startsWith('load_detail'))).not.toContain('graphile_created_to_start');
  });

  it("states how busy each paced run kept the machine: every process's CPU × jobs/s ÷ the cores", () => {
    const r = round(120, 3.8);
    r.oursShare = { ...r.oursShare, jobsPerSecond: 80, cpuPerJob: { 'runtime.main': 8, mariadb: 6, emulators: 3, bench: 1 } };
    r.graphileShare = { ...r.graphileShare!, jobsPerSecond: 160, cpuPerJob: { bench: 2, postgres: 2, emulators: 1 } };
    expect(machineBusy(r.oursShare, 2)).toBeCloseTo((18 * 80) / 2000, 10); // 0.72
    expect(machineBusy(r.graphileShare, 4)).toBeCloseTo((5 * 160) / 4000, 10); // 0.2
    expect(machineBusy(undefined, 2)).toBeNaN();
    const cores = machineBusy({ ...r.oursShare, jobsPerSecond: 1000, cpuPerJob: { bench: 1 } }); // one core busy
    const detail = closingLines([r], 0.8).find((l) => l.startsWith('share_detail'))!;
    expect(detail).toContain(`machine_busy ours=${machineBusy(r.oursShare).toFixed(2)} graphile=${machineBusy(r.graphileShare).toFixed(2)}`);
    expect(cores * availableParallelism()).toBeCloseTo(1, 10);
  });

  it("paces runs of ours at each peer's machine load and prints their hand-off ratios before the kept peer's", () => {
    const r = round(120, 3.8);
    r.oursShare = { ...r.oursShare, jobsPerSecond: 80, cpuPerJob: { 'runtime.main': 8, mariadb: 6, emulators: 3, bench: 1 } };
    r.graphileShare = { ...r.graphileShare!, jobsPerSecond: 160, cpuPerJob: { bench: 2, postgres: 2, emulators: 1 } };
    // graphile-worker kept 2 cores 0.4 busy (5 ms × 160 jobs/s): ours at 18 ms a job does that at 800 ÷ 18 jobs/s.
    expect(sameLoadRate(r.oursShare, r.graphileShare, 2)).toBeCloseTo(800 / 18, 10);
    const none = { share_handoff_ratio_kept_same_load: NaN, share_submit_ratio_kept_same_load: NaN };
    expect(loadHeadlines(r)).toEqual({ share_handoff_ratio_same_load: NaN, share_submit_ratio_same_load: NaN, ...none });
    const withLoad = (startMs: number[], submitMs: number[]): RoundFigures => ({
      ...r, oursSameLoad: run({ system: 'ours-http-load', mode: 'paced', toStartMs: startMs, submitToStartMs: submitMs, offeredPerSecond: 44.4 }),
    });
    // graphile-worker's paced submit → start p50 is 5 ms (./round).
    expect(loadHeadlines(withLoad([6, 7, 8], [9, 10, 11]))).toEqual({ share_handoff_ratio_same_load: 7 / 5, share_submit_ratio_same_load: 10 / 5, ...none });
    // With the kept peer (paced submit → start p50 6 ms) and ours at its load (p50s 9 and 12 ms).
    const kept = (x: RoundFigures): RoundFigures => ({
      ...x,
      graphileKept: run({ system: 'graphile-worker-kept', jobsPerSecond: 150, cpuPerJob: { bench: 3, postgres: 4, emulators: 1 } }),
      graphileKeptShare: run({ system: 'graphile-worker-kept', mode: 'paced', toStartMs: [6], offeredPerSecond: 120 }),
      oursKeptLoad: run({ system: 'ours-http-kload', mode: 'paced', toStartMs: [9], submitToStartMs: [12], offeredPerSecond: 50 }),
    });
    expect(loadHeadlines(kept(withLoad([6, 7, 8], [9, 10, 11])))).toMatchObject({ share_handoff_ratio_kept_same_load: 9 / 6, share_submit_ratio_kept_same_load: 12 / 6 });
    const lines = closingLines([kept(withLoad([6, 7, 8], [9, 10, 11])), kept(withLoad([4, 5, 6], [7, 8, 9])), kept(withLoad([9, 10, 11], [14, 15, 16]))], 0.8);
    const tail = HEADLINES.length + KEPT_HEADLINES.length;
    expect(lines.slice(-tail - LOAD_HEADLINES.length, -tail)).toEqual([
      'share_handoff_ratio_same_load=1.40 range=1.00..2.00', 'share_submit_ratio_same_load=2.00 range=1.60..3.00',
      'share_handoff_ratio_kept_same_load=1.50 range=1.50..1.50', 'share_submit_ratio_kept_same_load=2.00 range=2.00..2.00',
    ]);
    expect(lines.find((l) => l.startsWith('rounds='))).toContain('share_handoff_ratio_same_load_by_round=1.40,1.00,2.00');
    expect(lines.find((l) => l.startsWith('load_detail'))).toContain('ours_rate=44.4,44.4,44.4 ours_handoff_p50_ms=7.0,5.0,10.0');
    expect(lines.find((l) => l.startsWith('load_detail'))).toContain("at graphile-worker-kept's: ours_rate=50.0,50.0,50.0 ours_handoff_p50_ms=9.0,9.0,9.0");
    // Without the kept peer: its two same-load ratios say n/a.
    const alone = closingLines([withLoad([6, 7, 8], [9, 10, 11])], 0.8);
    expect(alone).toContain('share_handoff_ratio_kept_same_load=n/a');
    expect(alone.find((l) => l.startsWith('load_detail'))).not.toContain('graphile-worker-kept');
    const without = closingLines([r], 0.8);
    expect(without.some((l) => l.startsWith('share_handoff_ratio_same_load') || l.startsWith('load_detail'))).toBe(false);
  });

  it('the interquartile mean: the mean of the middle half, finer than a p50 of whole milliseconds', () => {
    expect(interquartileMean([5, 5, 6, 6, 6, 7, 40, 90])).toBeCloseTo((6 + 6 + 6 + 7) / 4, 10); // the outliers left out
    expect(interquartileMean([5, 6, 6, 6])).toBeCloseTo(6, 10);
    expect(interquartileMean([3, NaN])).toBe(3);
    expect(interquartileMean([])).toBeNaN();
  });

  it('says n/a for the ratios to graphile-worker when it did not run', () => {
    const alone = { ...round(100, 3.9), graphile: undefined, graphileShare: undefined };
    const lines = closingLines([alone], 0.8);
    expect(lines).toContain('peer_ratio=n/a');
    expect(lines).toContain('share_submit_ratio=n/a');
    expect(lines.at(-1)).toBe('write_tx_per_job=3.90 range=3.90..3.90');
  });
});
