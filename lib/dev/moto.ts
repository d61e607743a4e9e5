/**
 * moto_server (Python) as a local AWS-API server for EventBridge, KMS and Secrets Manager: started on a free
 * loopback port for tests and, when installed, by the local runtime.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.ts';

export interface MotoServer {
  endpoint: string;
  stop(): Promise<void>;
}

export class MotoUnavailableError extends Error {
  override name = 'MotoUnavailableError';
}

/**
 * Starts moto_server and waits until it answers.
 * @throws MotoUnavailableError when `moto_server` is not installed or does not come up within `timeoutMs`.
 */
export async function startMoto(timeoutMs = 30_000): Promise<MotoServer> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (spawnError) throw new MotoUnavailableError(`moto_server could not start (${spawnError.message}); install it with pip install 'moto[server]'`);
    if (child.exitCode !== null) throw new MotoUnavailableError(`moto_server exited with code ${child.exitCode}`);
    if (await fetch(`${endpoint}/moto-api/`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new MotoUnavailableError(`moto_server did not answer on ${endpoint} within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
