/**
 * CPU time per process group over a run, from /proc/<pid>/stat (user + system time of every thread, in clock
 * ticks of 10 ms). On a saturated 2-core machine jobs/s swings from run to run with whatever else runs; CPU
 * milliseconds per job for each process taking part move far less, and say where a system's cost lies.
 * Linux only: elsewhere (no /proc) every figure is undefined and the bench prints none.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's time fields (USER_HZ: 100 on every Linux we run on). */
const TICKS_PER_SECOND = 100;

/** User + system CPU of a process in ms, or undefined when it is gone (or there is no /proc). */
export function processCpuMs(pid: number, statFile = `/proc/${pid}/stat`): number | undefined {
  try {
    const stat = readFileSync(statFile, 'utf8');
    // Fields after the command name (which may hold spaces, inside parentheses): utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/**
 * User + system CPU in ms of the threads of `pid` whose name (/proc/<pid>/task/<tid>/comm) `pick` accepts,
 * e.g. Node's `MainThread`, a worker's `WorkerThread`, V8's `V8Worker` helpers; undefined without /proc.
 */
export function threadsCpuMs(pid: number, pick: (threadName: string) => boolean): number | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let ms = 0;
  for (const tid of tids) {
    try {
      if (pick(readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim())) ms += processCpuMs(Number(tid), `/proc/${pid}/task/${tid}/stat`) ?? 0;
    } catch {
      // the thread ended
    }
  }
  return ms;
}

/** Pids whose command name (/proc/<pid>/comm) is `name`, e.g. every `postgres` backend. */
export function pidsNamed(name: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries.filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
    } catch {
      return false;
    }
  });
}

/**
 * What a group is: the pids to read (looked up at the start and again at the end of a run), or a function
 * reading the group's CPU ms itself (e.g. some threads of one process).
 */
export type ProcessGroup = (() => number[]) | { readMs(): number };

/**
 * Starts metering `groups`; `stop(jobs)` returns CPU ms per job by group (processes that appeared during the run
 * count from zero; ones that ended during it are lost, so groups should be long-lived processes).
 */
export function startCpuMeter(groups: Record<string, ProcessGroup>): { stop(jobs: number): Record<string, number> } {
  const before = new Map<number, number>();
  const beforeMs = new Map<string, number>();
  for (const [name, group] of Object.entries(groups)) {
    if (typeof group === 'function') for (const pid of group()) before.set(pid, processCpuMs(pid) ?? 0);
    else beforeMs.set(name, group.readMs());
  }
  return {
    stop(jobs) {
      const perJob: Record<string, number> = {};
      for (const [name, group] of Object.entries(groups)) {
        let ms = 0;
        if (typeof group === 'function') for (const pid of group()) ms += (processCpuMs(pid) ?? 0) - (before.get(pid) ?? 0);
        else ms = group.readMs() - (beforeMs.get(name) ?? 0);
        perJob[name] = ms / jobs;
      }
      return perJob;
    },
  };
}

/** `cpu_ms_per_job total=… a=… b=…`, or '' when nothing could be read. */
export function formatCpu(perJob: Record<string, number>): string {
  const total = Object.values(perJob).reduce((a, b) => a + b, 0);
  if (total === 0) return '';
  return `cpu_ms_per_job total=${total.toFixed(2)} ${Object.entries(perJob).map(([k, v]) => `${k}=${v.toFixed(2)}`).join(' ')}`;
}
