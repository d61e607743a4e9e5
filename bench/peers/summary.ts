/**
 * The peers bench's closing lines: a summary row per run, the detail lines behind each ratio, each ratio's value
 * per round on one `rounds=` line, then each ratio as the median of its rounds with its range, in a fixed order
 * (see {@link HEADLINES}), after the ratios to graphile-worker made to keep our guarantees ({@link KEPT_HEADLINES},
 * ./graphile-kept-peer.ts) when it ran, and before those the hand-off ratios at graphile-worker's machine load
 * ({@link LOAD_HEADLINES}) when that run was made. Medians are nearest-rank (./load.ts `percentile`): with an even number of rounds,
 * the upper of the two middle values.
 */
import { availableParallelism } from 'node:os';
import { formatCpu, formatIo } from './cpu.ts';
import { percentile, type RunFigures } from './load.ts';

/** The runs of one round (graphile-worker's are absent when PostgreSQL is). */
export interface RoundFigures {
  /** ours-http, one user per job, unpaced. */
  oneUser: RunFigures;
  /** ours-http, the few users, unpaced. */
  fewUsers: RunFigures;
  /** ours-http, one user per job, paced at the share of oneUser's throughput. */
  oursShare: RunFigures;
  graphile?: RunFigures | undefined;
  /** graphile-worker paced at the share of its own unpaced throughput. */
  graphileShare?: RunFigures | undefined;
  /** graphile-worker writing what ours writes (./graphile-kept-peer.ts), unpaced. */
  graphileKept?: RunFigures | undefined;
  /** graphile-worker-kept paced at the share of its own unpaced throughput. */
  graphileKeptShare?: RunFigures | undefined;
  /** ours-http, one user per job, paced to keep the machine as busy as graphileShare did ({@link sameLoadRate}). */
  oursSameLoad?: RunFigures | undefined;
  /** ours-http, one user per job, paced to keep the machine as busy as graphileKeptShare did. */
  oursKeptLoad?: RunFigures | undefined;
  /** Write transactions per job of the round's statement window (one user per job, over HTTP). */
  writeTxPerJob?: number | undefined;
}

/** The closing lines' names, in the order printed. */
export const HEADLINES = ['peer_ratio', 'peer_ratio_few_users', 'share_handoff_ratio', 'share_submit_ratio', 'cpu_ratio', 'db_cpu_ratio', 'write_tx_per_job'] as const;
type Headline = (typeof HEADLINES)[number];
/**
 * Ours (over HTTP, one user per job) against graphile-worker-kept: unpaced, jobs/s ÷ its jobs/s, MariaDB's CPU per
 * job ÷ PostgreSQL's, and ours' CPU without the emulators ÷ the kept peer's total; each paced at the share of its
 * own throughput, the two hand-off ratios as {@link HEADLINES}' (its clients submit over HTTP to an API in front of
 * it, ./http-front.ts: the hand-off divides by its created → start, taken before its guarded create as ours'
 * `createdAt` is before ours', the submit ratio by its client submit → start, HTTP included on both sides). Last, `cpu_ratio_kept_no_emulators`: as cpu_ratio_kept with the
 * emulators left out of the peer's side too (its mock streams it the answer as ours' does, and cpu_ratio's
 * definition counts that on the peer's side only). Printed before {@link HEADLINES}, and only when that peer ran.
 */
export const KEPT_HEADLINES = [
  'peer_ratio_kept', 'db_cpu_ratio_kept', 'cpu_ratio_kept', 'share_handoff_ratio_kept', 'share_submit_ratio_kept', 'cpu_ratio_kept_no_emulators',
] as const;
type KeptHeadline = (typeof KEPT_HEADLINES)[number];
/**
 * The two hand-off ratios with ours paced to load the machine as graphile-worker's paced run did instead of at the
 * share of its own throughput ({@link machineBusy} says why the two differ), then the same against
 * graphile-worker-kept's paced run (n/a where a peer did not run). Printed before the kept peer's and
 * {@link HEADLINES}, and only when one of those runs was made.
 */
export const LOAD_HEADLINES = [
  'share_handoff_ratio_same_load', 'share_submit_ratio_same_load', 'share_handoff_ratio_kept_same_load', 'share_submit_ratio_kept_same_load',
] as const;
type LoadHeadline = (typeof LOAD_HEADLINES)[number];

const total = (o?: Record<string, number>) => (o ? Object.values(o).reduce((a, b) => a + b, 0) : NaN);
const p50 = (v?: number[]) => (v ? percentile(v, 50) : NaN);
const median = (v: number[]) => percentile(v, 50);
/** Ours' paced p50 of client submit → startedAt ÷ a paced peer's submit → start p50. */
const shareRatio = (ours: number[] | undefined, peer?: RunFigures) => (peer ? p50(ours) / p50(peer.toStartMs) : NaN);
/**
 * Ours' paced p50 of created → startedAt ÷ a paced peer's hand-off p50: its created → start when an API is in
 * front of it (graphile-worker-kept, ./http-front.ts), else its submit → start (its client calls the create itself).
 */
const handoffRatio = (ours: number[] | undefined, peer?: RunFigures) => (peer ? p50(ours) / p50(peer.createdToStartMs ?? peer.toStartMs) : NaN);

/**
 * How busy a run kept the machine: the CPU of every process taking part (emulators and clients included) ÷ the
 * run's time × the cores. Pacing each system at the same share of its own throughput does not load the machine
 * alike: a system whose unpaced run is bound by the machine's CPU and costs more a job when paced (ours: batches of
 * one) is closer to saturation at that share than one bound by its own concurrency.
 */
export const machineBusy = (f?: RunFigures, cores = availableParallelism()) => (f ? (total(f.cpuPerJob) * f.jobsPerSecond) / (1000 * cores) : NaN);

/**
 * The rate (jobs/s) at which ours would keep the machine as busy as `peer` did, at the CPU per job of `oursPaced`
 * (ours' paced run of the round). Ours costs more a job at a lower rate, so the run made at it loads the machine
 * more than `peer` did (0.91 against 0.67 at worst in the runs of docs/performance.md): `load_detail` prints what it
 * did, and the ratios lean against ours.
 */
export const sameLoadRate = (oursPaced: RunFigures, peer: RunFigures, cores = availableParallelism()) =>
  (machineBusy(peer, cores) * cores * 1000) / total(oursPaced.cpuPerJob);

/** A run's CPU per job without the emulators' (SQS, the mock provider, moto: other machines' work when deployed). */
const withoutEmulators = (f: RunFigures) => total(f.cpuPerJob) - (f.cpuPerJob?.emulators ?? 0);

/** One round's value of each headline (NaN where a part is missing). */
export function roundHeadlines(r: RoundFigures): Record<Headline, number> {
  const g = r.graphile;
  const gs = r.graphileShare;
  return {
    peer_ratio: g ? r.oneUser.jobsPerSecond / g.jobsPerSecond : NaN,
    peer_ratio_few_users: g ? r.fewUsers.jobsPerSecond / g.jobsPerSecond : NaN,
    share_handoff_ratio: handoffRatio(r.oursShare.toStartMs, gs),
    share_submit_ratio: shareRatio(r.oursShare.submitToStartMs, gs),
    cpu_ratio: g ? withoutEmulators(r.oneUser) / total(g.cpuPerJob) : NaN,
    db_cpu_ratio: g ? (r.oneUser.cpuPerJob?.mariadb ?? NaN) / (g.cpuPerJob?.postgres ?? NaN) : NaN,
    write_tx_per_job: r.writeTxPerJob ?? NaN,
  };
}

/** One round's ratios to graphile-worker-kept (NaN when it did not run). */
export function keptHeadlines(r: RoundFigures): Record<KeptHeadline, number> {
  const k = r.graphileKept;
  return {
    peer_ratio_kept: k ? r.oneUser.jobsPerSecond / k.jobsPerSecond : NaN,
    db_cpu_ratio_kept: k ? (r.oneUser.cpuPerJob?.mariadb ?? NaN) / (k.cpuPerJob?.postgres ?? NaN) : NaN,
    cpu_ratio_kept: k ? withoutEmulators(r.oneUser) / total(k.cpuPerJob) : NaN,
    share_handoff_ratio_kept: handoffRatio(r.oursShare.toStartMs, r.graphileKeptShare),
    share_submit_ratio_kept: shareRatio(r.oursShare.submitToStartMs, r.graphileKeptShare),
    cpu_ratio_kept_no_emulators: k ? withoutEmulators(r.oneUser) / withoutEmulators(k) : NaN,
  };
}

/** One round's hand-off ratios at each peer's machine load (NaN where that run was not made). */
export function loadHeadlines(r: RoundFigures): Record<LoadHeadline, number> {
  return {
    share_handoff_ratio_same_load: r.oursSameLoad ? handoffRatio(r.oursSameLoad.toStartMs, r.graphileShare) : NaN,
    share_submit_ratio_same_load: r.oursSameLoad ? shareRatio(r.oursSameLoad.submitToStartMs, r.graphileShare) : NaN,
    share_handoff_ratio_kept_same_load: r.oursKeptLoad ? handoffRatio(r.oursKeptLoad.toStartMs, r.graphileKeptShare) : NaN,
    share_submit_ratio_kept_same_load: r.oursKeptLoad ? shareRatio(r.oursKeptLoad.submitToStartMs, r.graphileKeptShare) : NaN,
  };
}

const fixed = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');
const list = (values: number[], digits = 2) => values.map((v) => fixed(v, digits)).join(',');

/** One summary row per run (jobs/s; start and done p50; CPU per job, then system calls and switches). */
export function summaryRows(figures: RunFigures[]): string[] {
  const lines = ['summary (jobs/s; start and done p50 ms):'];
  for (const f of figures) {
    const sent = f.toSentMs ? ` (sent ${fixed(p50(f.toSentMs), 1)})` : '';
    lines.push(`  ${f.system.padEnd(16)} ${f.mode.padEnd(7)} ${fixed(f.jobsPerSecond, 1).padStart(7)}  start ${fixed(p50(f.toStartMs), 1).padStart(7)}${sent}  done ${fixed(p50(f.toDoneMs), 1).padStart(7)}  ${f.cpuPerJob ? formatCpu(f.cpuPerJob) : ''}`);
    const io = f.ioPerJob ? formatIo(f.ioPerJob) : '';
    if (io) lines.push(`  ${''.padEnd(16)} ${''.padEnd(7)} ${io}`);
  }
  return lines;
}

/** Medians over the rounds of each CPU group, `a=… b=…`. */
function medianGroups(runs: RunFigures[]): string {
  const names = [...new Set(runs.flatMap((f) => Object.keys(f.cpuPerJob ?? {})))];
  return names.map((n) => `${n}=${fixed(median(runs.map((f) => f.cpuPerJob?.[n] ?? NaN)))}`).join(' ');
}

/** Medians over the rounds of a system's database writes per job. */
function medianDb(runs: RunFigures[], serverCpu: (f: RunFigures) => number): string {
  const per = (pick: (f: RunFigures) => number) => median(runs.map((f) => (f.dbWrites ? pick(f) / f.jobs : NaN)));
  const rows = per((f) => f.dbWrites!.writes.inserted + f.dbWrites!.writes.updated + f.dbWrites!.writes.deleted);
  return `server_cpu_ms=${fixed(median(runs.map(serverCpu)))} rows_written=${fixed(rows)} commits=${fixed(per((f) => f.dbWrites!.writes.commits))}`
    + ` log_bytes=${fixed(per((f) => f.dbWrites!.writes.logBytes), 0)}`;
}

/** The detail lines, the `rounds=` line and the headlines, as printed last. */
export function closingLines(rounds: RoundFigures[], share: number): string[] {
  const values = rounds.map(roundHeadlines);
  const withPeer = rounds.filter((r) => r.graphile);
  const lines: string[] = [];
  const keptUp = (f?: RunFigures) => (f ? f.submitPerSecond / (f.offeredPerSecond ?? f.submitPerSecond) : NaN);
  const keptPaced = rounds.some((r) => r.graphileKeptShare);
  lines.push(`share_detail fraction=${share} ours_rate=${list(rounds.map((r) => r.oursShare.offeredPerSecond ?? NaN), 1)}`
    + ` ours_handoff_p50_ms=${list(rounds.map((r) => p50(r.oursShare.toStartMs)), 1)} ours_submit_to_start_p50_ms=${list(rounds.map((r) => p50(r.oursShare.submitToStartMs)), 1)}`
    + ` ours_sent_p50_ms=${list(rounds.map((r) => p50(r.oursShare.toSentMs)), 1)} graphile_rate=${list(rounds.map((r) => r.graphileShare?.offeredPerSecond ?? NaN), 1)}`
    + ` graphile_start_p50_ms=${list(rounds.map((r) => p50(r.graphileShare?.toStartMs)), 1)}`
    + (keptPaced ? ` graphile_kept_rate=${list(rounds.map((r) => r.graphileKeptShare?.offeredPerSecond ?? NaN), 1)}`
      + ` graphile_kept_start_p50_ms=${list(rounds.map((r) => p50(r.graphileKeptShare?.toStartMs)), 1)}`
      + ` graphile_kept_created_to_start_p50_ms=${list(rounds.map((r) => p50(r.graphileKeptShare?.createdToStartMs)), 1)}` : '')
    + ` kept_up ours=${list(rounds.map((r) => keptUp(r.oursShare)))} graphile=${list(rounds.map((r) => keptUp(r.graphileShare)))}`
    + (keptPaced ? ` graphile_kept=${list(rounds.map((r) => keptUp(r.graphileKeptShare)))}` : '')
    + ` machine_busy ours=${list(rounds.map((r) => machineBusy(r.oursShare)))} graphile=${list(rounds.map((r) => machineBusy(r.graphileShare)))}`
    + (keptPaced ? ` graphile_kept=${list(rounds.map((r) => machineBusy(r.graphileKeptShare)))}` : '') + ' (by round)');
  if (withPeer.length > 0) {
    lines.push(`cpu_detail ms/job, medians of the rounds, unpaced: ours-http (one user per job) without emulators=${fixed(median(withPeer.map((r) => withoutEmulators(r.oneUser))))}`
      + ` [${medianGroups(withPeer.map((r) => r.oneUser))}]; graphile-worker total=${fixed(median(withPeer.map((r) => total(r.graphile!.cpuPerJob))))} [${medianGroups(withPeer.map((r) => r.graphile!))}]`);
    lines.push(`db_detail per job, medians of the rounds, unpaced: ours-http (one user per job) ${medianDb(withPeer.map((r) => r.oneUser), (f) => f.cpuPerJob?.mariadb ?? NaN)};`
      + ` graphile-worker ${medianDb(withPeer.map((r) => r.graphile!), (f) => f.cpuPerJob?.postgres ?? NaN)} (server-wide counters; see each run's db_per_job line)`);
  }
  const withKept = rounds.filter((r) => r.graphileKept);
  if (withKept.length > 0) {
    lines.push(`kept_detail per job, medians of the rounds, unpaced: graphile-worker-kept jobs/s=${fixed(median(withKept.map((r) => r.graphileKept!.jobsPerSecond)), 1)}`
      + ` cpu total=${fixed(median(withKept.map((r) => total(r.graphileKept!.cpuPerJob))))} without emulators=${fixed(median(withKept.map((r) => withoutEmulators(r.graphileKept!))))}`
      + ` [${medianGroups(withKept.map((r) => r.graphileKept!))}];`
      + ` ${medianDb(withKept.map((r) => r.graphileKept!), (f) => f.cpuPerJob?.postgres ?? NaN)}`);
  }
  const withLoad = rounds.filter((r) => r.oursSameLoad || r.oursKeptLoad);
  if (withLoad.length > 0) {
    /** Ours' run at a peer's load against that peer's paced run, by round. */
    const atLoad = (ours: (r: RoundFigures) => RunFigures | undefined, peer: (r: RoundFigures) => RunFigures | undefined, name: string) =>
      `ours_rate=${list(rounds.map((r) => ours(r)?.offeredPerSecond ?? NaN), 1)}`
      + ` ours_handoff_p50_ms=${list(rounds.map((r) => p50(ours(r)?.toStartMs)), 1)} ours_submit_to_start_p50_ms=${list(rounds.map((r) => p50(ours(r)?.submitToStartMs)), 1)}`
      + ` ${name}_start_p50_ms=${list(rounds.map((r) => p50(peer(r)?.toStartMs)), 1)}`
      + (rounds.some((r) => peer(r)?.createdToStartMs) ? ` ${name}_created_to_start_p50_ms=${list(rounds.map((r) => p50(peer(r)?.createdToStartMs)), 1)}` : '')
      + ` machine_busy ours=${list(rounds.map((r) => machineBusy(ours(r))))} ${name}=${list(rounds.map((r) => machineBusy(peer(r))))}`;
    const parts = [
      rounds.some((r) => r.oursSameLoad) ? `at graphile-worker's: ${atLoad((r) => r.oursSameLoad, (r) => r.graphileShare, 'graphile')}` : '',
      rounds.some((r) => r.oursKeptLoad) ? `at graphile-worker-kept's: ${atLoad((r) => r.oursKeptLoad, (r) => r.graphileKeptShare, 'graphile_kept')}` : '',
    ].filter(Boolean);
    lines.push(`load_detail ours-http paced at each peer's machine load, ${parts.join('; ')} (by round)`);
  }
  const kept = rounds.map(keptHeadlines);
  const keptNames = withKept.length > 0 ? KEPT_HEADLINES : [];
  const load = rounds.map(loadHeadlines);
  const loadNames = withLoad.length > 0 ? LOAD_HEADLINES : [];
  lines.push(`rounds=${rounds.length} ${HEADLINES.map((h) => `${h}_by_round=${list(values.map((v) => v[h]))}`).join(' ')}`
    + loadNames.map((h) => ` ${h}_by_round=${list(load.map((v) => v[h]))}`).join('')
    + keptNames.map((h) => ` ${h}_by_round=${list(kept.map((v) => v[h]))}`).join(''));
  const headline = (h: string, all: number[]) => {
    const finite = all.filter((v) => Number.isFinite(v));
    return finite.length > 0 ? `${h}=${fixed(median(finite))} range=${fixed(Math.min(...finite))}..${fixed(Math.max(...finite))}` : `${h}=n/a`;
  };
  for (const h of loadNames) lines.push(headline(h, load.map((v) => v[h])));
  for (const h of keptNames) lines.push(headline(h, kept.map((v) => v[h])));
  for (const h of HEADLINES) lines.push(headline(h, values.map((v) => v[h])));
  return lines;
}
