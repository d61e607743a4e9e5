/**
 * CPU time per process group over a run, from /proc/<pid>/stat (user + system time of every thread, in clock
 * ticks of 10 ms). On a saturated 2-core machine jobs/s swings from run to run with whatever else runs; CPU
 * milliseconds per job for each process taking part move far less, and say where a system's cost lies.
 * Linux only: elsewhere (no /proc) every figure is undefined and the bench prints none.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's time fields (USER_HZ: 100 on every Linux we run on). */
const TICKS_PER_SECOND = 100;

/**
 * User + system CPU of a process in ms, or undefined when it is gone (or there is no /proc). With `reapedChildren`,
 * also what its children that ended (and were waited for) spent: cutime + cstime.
 */
export function processCpuMs(pid: number, statFile = `/proc/${pid}/stat`, reapedChildren = false): number | undefined {
  try {
    const stat = readFileSync(statFile, 'utf8');
    // Fields after the command name (which may hold spaces, inside parentheses): utime and stime are 14 and 15,
    // cutime and cstime 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + (reapedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
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
 * `pid` and its descendants (/proc/<pid>/task/<tid>/children), e.g. PostgreSQL's postmaster and every backend,
 * or the emulators' process and the moto_server it started; [] without /proc.
 */
export function processTree(pid: number): number[] {
  const found: number[] = [];
  const visit = (p: number) => {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    found.push(p);
    for (const tid of tids) {
      let children: string;
      try {
        children = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean)) visit(Number(child));
    }
  };
  visit(pid);
  return found;
}

/**
 * A process tree as one group whose CPU is exact over a run though its processes come and go (PostgreSQL's
 * autovacuum workers, for one, start, work for a moment and end between two readings): every live member's own
 * CPU and what its ended children left in its cutime/cstime. A member that ends during the run moves its CPU into
 * its parent's (a member too) children time, so the difference of two readings counts it once, and only its part
 * in the run. I/O counts are those of the members alive at both readings (/proc keeps no children's counts): a
 * member that ended keeps its last reading, so it adds nothing rather than taking its count away.
 */
export function processTreeGroup(root: number): ProcessGroup {
  let last = new Map<number, IoCounts>();
  const ended: IoCounts = { syscalls: 0, switches: 0 };
  return {
    readMs: () => processTree(root).reduce((ms, pid) => ms + (processCpuMs(pid, undefined, true) ?? 0), 0),
    readIo: () => {
      const now = new Map<number, IoCounts>();
      for (const pid of processTree(root)) {
        const io = processIo(pid);
        if (io) now.set(pid, io);
      }
      for (const [pid, io] of last) if (!now.has(pid)) addIo(ended, io);
      last = now;
      const sum: IoCounts = { ...ended };
      for (const io of now.values()) addIo(sum, io);
      return sum;
    },
  };
}

/**
 * Read and write system calls (/proc/<pid>/io `syscr` + `syscw`: read, readv, pread, write, writev, pwrite…; not
 * send/recv, which MariaDB and PostgreSQL use on their sockets and Node does not) and context switches
 * (voluntary + involuntary, /proc/<pid>/task/<tid>/status) of a process or one thread. On this
 * virtualised machine each one costs far more than on bare metal, and unlike CPU time their count per job does
 * not drift with the neighbours' load: they show a cut of one round trip that CPU figures hide in their noise.
 */
export interface IoCounts { syscalls: number; switches: number }

function ioOf(dir: string): IoCounts | undefined {
  try {
    const io = readFileSync(`${dir}/io`, 'utf8');
    const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    const tasks = dir.includes('/task/') ? [dir] : readdirSync(`${dir}/task`).map((tid) => `${dir}/task/${tid}`);
    let switches = 0;
    for (const task of tasks) {
      try {
        const status = readFileSync(`${task}/status`, 'utf8');
        switches += field(status, 'voluntary_ctxt_switches') + field(status, 'nonvoluntary_ctxt_switches');
      } catch {
        // the thread ended
      }
    }
    return { syscalls: field(io, 'syscr') + field(io, 'syscw'), switches };
  } catch {
    return undefined;
  }
}

/** Read/write system calls and context switches of a process, all its threads (undefined when it is gone). */
export function processIo(pid: number): IoCounts | undefined {
  return ioOf(`/proc/${pid}`);
}

/** The same for the threads of `pid` whose name `pick` accepts (as {@link threadsCpuMs}). */
export function threadsIo(pid: number, pick: (threadName: string) => boolean): IoCounts {
  const sum: IoCounts = { syscalls: 0, switches: 0 };
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return sum;
  }
  for (const tid of tids) {
    try {
      if (!pick(readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim())) continue;
    } catch {
      continue;
    }
    const io = ioOf(`/proc/${pid}/task/${tid}`);
    if (io) addIo(sum, io);
  }
  return sum;
}

function addIo(into: IoCounts, io: IoCounts, sign = 1): void {
  into.syscalls += sign * io.syscalls;
  into.switches += sign * io.switches;
}

/**
 * What a group is: the pids to read (looked up at the start and again at the end of a run), or functions
 * reading the group's CPU ms and I/O counts themselves (e.g. some threads of one process).
 */
export type ProcessGroup = (() => number[]) | { readMs(): number; readIo?(): IoCounts };

/**
 * Starts metering `groups`; `stop(jobs)` returns CPU ms per job by group, and `io(jobs)` (after stop) the read and
 * write system calls and context switches per job by group (processes that appeared during the run count from
 * zero; ones that ended during it are lost, so groups should be long-lived processes).
 */
export function startCpuMeter(groups: Record<string, ProcessGroup>): {
  stop(jobs: number): Record<string, number>;
  io(jobs: number): Record<string, IoCounts>;
} {
  const before = new Map<number, number>();
  const beforeIo = new Map<number, IoCounts>();
  const beforeMs = new Map<string, number>();
  const beforeGroupIo = new Map<string, IoCounts>();
  for (const [name, group] of Object.entries(groups)) {
    if (typeof group === 'function') {
      for (const pid of group()) {
        before.set(pid, processCpuMs(pid) ?? 0);
        beforeIo.set(pid, processIo(pid) ?? { syscalls: 0, switches: 0 });
      }
    } else {
      beforeMs.set(name, group.readMs());
      if (group.readIo) beforeGroupIo.set(name, group.readIo());
    }
  }
  const ioTotals = new Map<string, IoCounts>();
  return {
    stop(jobs) {
      const perJob: Record<string, number> = {};
      for (const [name, group] of Object.entries(groups)) {
        let ms = 0;
        const io: IoCounts = { syscalls: 0, switches: 0 };
        if (typeof group === 'function') {
          for (const pid of group()) {
            ms += (processCpuMs(pid) ?? 0) - (before.get(pid) ?? 0);
            const now = processIo(pid);
            if (now) {
              addIo(io, now);
              addIo(io, beforeIo.get(pid) ?? { syscalls: 0, switches: 0 }, -1);
            }
          }
        } else {
          ms = group.readMs() - (beforeMs.get(name) ?? 0);
          if (group.readIo) {
            addIo(io, group.readIo());
            addIo(io, beforeGroupIo.get(name)!, -1);
          }
        }
        perJob[name] = ms / jobs;
        ioTotals.set(name, io);
      }
      return perJob;
    },
    io(jobs) {
      return Object.fromEntries([...ioTotals].map(([name, io]) => [name, { syscalls: io.syscalls / jobs, switches: io.switches / jobs }]));
    },
  };
}

/** `rw_syscalls_per_job total=… a=…  ctx_switches_per_job total=… a=…`, or '' when nothing could be read. */
export function formatIo(perJob: Record<string, IoCounts>): string {
  const entries = Object.entries(perJob);
  const total = (k: keyof IoCounts) => entries.reduce((a, [, v]) => a + v[k], 0);
  if (total('syscalls') === 0 && total('switches') === 0) return '';
  const list = (k: keyof IoCounts) => entries.map(([name, v]) => `${name}=${v[k].toFixed(1)}`).join(' ');
  return `rw_syscalls_per_job total=${total('syscalls').toFixed(1)} ${list('syscalls')}  ctx_switches_per_job total=${total('switches').toFixed(1)} ${list('switches')}`;
}

/** `cpu_ms_per_job total=… a=… b=…`, or '' when nothing could be read. */
export function formatCpu(perJob: Record<string, number>): string {
  const total = Object.values(perJob).reduce((a, b) => a + b, 0);
  if (total === 0) return '';
  return `cpu_ms_per_job total=${total.toFixed(2)} ${Object.entries(perJob).map(([k, v]) => `${k}=${v.toFixed(2)}`).join(' ')}`;
}
