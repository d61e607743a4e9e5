/**
 * A bundled Lambda in a process of its own (./container-runner.mjs), driven over IPC as Lambda drives a
 * container: one event at a time. Plain Node with the deployed NODE_OPTIONS (`--enable-source-maps`), nothing
 * of this process's environment but PATH and what the caller passes, as a function's configuration would.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface MemorySnapshot { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number }

export interface Loaded { importMs: number; sinceStartMs: number; importCpuMs: number; processCpuMs: number; memory: MemorySnapshot }
export interface Invoked<R> { response: R; wallMs: number; cpuMs: number; memory: MemorySnapshot }
export interface Report { peaks: MemorySnapshot; maxRssBytes: number; samples: number; sampleCpuMs: number; processCpuMs: number; memory: MemorySnapshot }

export interface Container {
  loaded: Loaded;
  invoke<R>(event: unknown): Promise<Invoked<R>>;
  /** The peaks so far; the process exits after answering. */
  report(): Promise<Report>;
  /** Bytes the function wrote to stdout and stderr (its log lines; CloudWatch Logs on AWS). */
  logBytes(): number;
  /** Waits up to 10 s for the process to end by itself (after a report: a --cpu-prof profile is written then), then kills it. */
  stop(): Promise<void>;
}

/** What infra/app-function.ts gives every function. */
export const DEPLOYED_NODE_OPTIONS = '--enable-source-maps';

const RUNNER = fileURLToPath(new URL('./container-runner.mjs', import.meta.url));

/** Starts a container on `bundle` (its index.mjs) and resolves once the module is imported. */
export function startContainer(bundle: string, env: Record<string, string>, timeoutMs: number, execArgv: string[] = []): Promise<Container> {
  const child = fork(RUNNER, [bundle, String(timeoutMs)], {
    env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: DEPLOYED_NODE_OPTIONS, ...env },
    execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // A CPU share like a small function's: the container joins a cgroup (v1 `cpu`) whose quota the caller set.
  const cgroup = process.env.BENCH_MEMORY_CPU_CGROUP?.trim();
  if (cgroup && child.pid) appendFileSync(path.join(cgroup, 'cgroup.procs'), `${child.pid}\n`);
  let logBytes = 0;
  let lastOutput = '';
  const onOutput = (d: Buffer) => {
    logBytes += d.length;
    lastOutput = (lastOutput + d.toString()).slice(-2000);
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);
  const next = <T>(kind: string) => new Promise<T>((resolve, reject) => {
    const onMessage = (msg: { kind: string; error?: string }) => {
      if (msg.kind !== kind) return;
      cleanup();
      if (msg.error) reject(new Error(`handler failed: ${msg.error}\n${lastOutput}`));
      else resolve(msg as T);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`container exited (${code}) while waiting for "${kind}":\n${lastOutput}`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
  return next<Loaded>('loaded').then((loaded) => containerOf(child, loaded, next, () => logBytes));
}

function containerOf(child: ChildProcess, loaded: Loaded, next: <T>(kind: string) => Promise<T>, logBytes: () => number): Container {
  return {
    loaded,
    invoke: <R>(event: unknown) => {
      const done = next<Invoked<R>>('done');
      child.send({ kind: 'invoke', event });
      return done;
    },
    report: () => {
      const report = next<Report>('report');
      child.send({ kind: 'report' });
      return report;
    },
    logBytes,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const timer = setTimeout(() => child.kill(), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
