/**
 * AWS-API servers for the tests. SQS: fauxqs in-process. EventBridge, KMS and Secrets Manager: moto_server
 * (Python) on a free loopback port. When AWS_ENDPOINT_URL is set (e.g. LocalStack), neither is started and
 * every client uses that endpoint instead.
 */
import { startFauxqs } from 'fauxqs';
import { startMoto } from '../../lib/dev/moto.ts';
import { freePort } from '../../lib/dev/ports.ts';

export interface Emulators {
  sqsEndpoint: string;
  awsEndpoint: string;
  stop(): Promise<void>;
}

export async function startEmulators(): Promise<Emulators> {
  const external = process.env.AWS_ENDPOINT_URL?.trim();
  if (external) return { sqsEndpoint: external, awsEndpoint: external, stop: async () => {} };
  const [fauxqs, moto] = await Promise.all([
    startFauxqs({ port: await freePort(), logger: false, host: '127.0.0.1' } as Parameters<typeof startFauxqs>[0]),
    startMoto(),
  ]);
  return {
    sqsEndpoint: `http://127.0.0.1:${fauxqs.port}`,
    awsEndpoint: moto.endpoint,
    stop: async () => {
      await fauxqs.stop();
      await moto.stop();
    },
  };
}
