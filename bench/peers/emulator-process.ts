/**
 * Starts bench/emulators.ts in a child process and reads its endpoints. The child's stdin is a pipe from this
 * process: when this process ends, even by a crash, the pipe closes and the emulators (moto_server included)
 * stop, so no run leaves them behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { EmulatorEndpoints } from '../emulators.ts';
import { hostNodeFlags } from './ours.ts';

function profileFlags(): string[] {
  const dir = process.env.BENCH_CPU_PROF_EMULATORS;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

export interface EmulatorProcess {
  endpoints: EmulatorEndpoints;
  pid: number;
  stop(): Promise<void>;
}

/**
 * `args`: e.g. ['--count'] (bench/emulators.ts). BENCH_CPU_PROF_EMULATORS=<dir>: the child writes a V8 CPU profile
 * of its main thread there when it stops (fauxqs, the mock provider and the realtime hub run on it).
 */
export async function startEmulators(args: string[] = []): Promise<EmulatorProcess> {
  const child: ChildProcess = spawn(process.execPath, [...hostNodeFlags(), ...profileFlags(), '--import', 'tsx', fileURLToPath(new URL('../emulators.ts', import.meta.url)), ...args],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  const endpoints = JSON.parse((await once(createInterface({ input: child.stdout! }), 'line'))[0] as string) as EmulatorEndpoints;
  const exited = once(child, 'exit');
  return {
    endpoints,
    pid: child.pid!,
    stop: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}
