/** The benches' settings from the environment, checked, and whether a server listens. */
import { createConnection } from 'node:net';

/** A positive number from `name`, else `fallback`; anything else is refused with the variable's name. */
export function positiveNumber(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!(value > 0) || !Number.isFinite(value)) throw new Error(`${name}=${JSON.stringify(raw)}: expected a positive number`);
  return value;
}

/** BENCH_SWEEP: comma-separated fractions of a system's own unpaced rate, each in (0, 2]. */
export function sweepFromEnv(env: NodeJS.ProcessEnv = process.env): number[] {
  return (env.BENCH_SWEEP ?? '').split(',').filter((v) => v.trim() !== '').map((v) => {
    const fraction = Number(v);
    if (!(fraction > 0 && fraction <= 2)) throw new Error(`BENCH_SWEEP: ${JSON.stringify(v)} is not a fraction in (0, 2]; expected e.g. 0.5,0.7,0.85,1`);
    return fraction;
  });
}

/** True when something accepts TCP connections at host:port. */
export function portOpen(hostName: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostName, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
