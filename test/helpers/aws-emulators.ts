/**
 * AWS-API servers for the tests. SQS: fauxqs in-process. EventBridge, KMS and Secrets Manager: moto_server
 * (Python) on a free loopback port. When AWS_ENDPOINT_URL is set (e.g. LocalStack), neither is started and
 * every client uses that endpoint instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { freePort, waitFor } from './ports.ts';

export interface Emulators {
  sqsEndpoint: string;
  awsEndpoint: string;
  stop(): Promise<void>;
}

export async function startEmulators(): Promise<Emulators> {
  const external = process.env.AWS_ENDPOINT_URL?.trim();
  if (external) return { sqsEndpoint: external, awsEndpoint: external, stop: async () => {} };
  const [fauxqs, moto] = await Promise.all([startFauxqsServer(), startMoto()]);
  return {
    sqsEndpoint: `http://127.0.0.1:${fauxqs.port}`,
    awsEndpoint: moto.endpoint,
    stop: async () => {
      await fauxqs.stop();
      await moto.stop();
    },
  };
}

async function startFauxqsServer(): Promise<FauxqsServer> {
  return startFauxqs({ port: await freePort(), logger: false, host: '127.0.0.1' } as Parameters<typeof startFauxqs>[0]);
}

async function startMoto(): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  let child: ChildProcess;
  try {
    child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  } catch (err) {
    throw new Error('moto_server is not installed (pip install "moto[server]"); it serves EventBridge/KMS/Secrets Manager in tests', { cause: err });
  }
  const spawnError = new Promise<never>((_, reject) =>
    child.once('error', (err) => reject(new Error(`moto_server could not start: ${err.message}`))),
  );
  await Promise.race([waitFor(async () => (await fetch(`${endpoint}/moto-api/`)).ok, `moto_server on ${endpoint}`), spawnError]);
  return {
    endpoint,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
