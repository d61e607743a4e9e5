/**
 * The services the engine talks to over the network in production (SQS, the AI provider, EventBridge and KMS),
 * run in a process of their own for benchmarks: fauxqs and the mock chat-completions server each on a worker thread
 * of its own (./emulator-thread.ts; BENCH_EMULATOR_THREADS=0: all on the main thread), the local realtime hub
 * (AppSync Events' stand-in: it checks each publish's SigV4 signature and fans it out; it takes publishes signed
 * with the local runtime's default key pair and refuses every subscriber, as no bench using this process
 * subscribes), and moto_server when it is installed (as `npm start` uses it; a child of this process, so its CPU
 * counts with the emulators').
 * Prints one JSON line with their URLs ({@link EmulatorEndpoints}), then runs until SIGTERM or until its stdin
 * ends (bench/peers/emulator-process.ts keeps it open for as long as the bench runs).
 *
 * `--count`: SQS and the AWS-API server are reached through counting proxies (./capacity/aws-call-counter.ts),
 * which also answer GET `countsPath` with the calls seen so far.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { workerExecArgv } from '../lib/dev/local-runtime/consumers.ts';
import { MotoUnavailableError, startMoto } from '../lib/dev/moto.ts';
import { startRealtimeHub } from '../lib/dev/local-runtime/realtime-hub.ts';
import { startAwsCallCounter } from './capacity/aws-call-counter.ts';
import { startService, type EmulatedService } from './emulator-thread.ts';
import { HUB_PUBLISHER } from './peers/hub-publisher.ts';

export interface EmulatorEndpoints {
  sqsEndpoint: string;
  mockAiUrl: string;
  /** The realtime hub's HTTP publish endpoint (what REALTIME_HTTP_ENDPOINT names). */
  realtimeHttpEndpoint: string;
  /** EventBridge and KMS (moto_server); absent when it is not installed. */
  awsEndpoint?: string;
  /** With `--count`: where each proxy tells its counts. */
  counts?: { sqs: string; aws?: string };
}

/** `service` on a worker thread of its own (the thread inherits this process's module loaders and profilers). */
async function onThread(service: EmulatedService): Promise<{ url: string; stop(): Promise<void> }> {
  const worker = new Worker(new URL('./emulator-thread.ts', import.meta.url), { workerData: { service }, execArgv: workerExecArgv(process.execArgv) });
  const [started] = (await once(worker, 'message')) as [{ url: string }];
  return {
    url: started.url,
    stop: async () => {
      worker.postMessage('stop');
      await once(worker, 'message');
      await worker.terminate();
    },
  };
}

const start = process.env.BENCH_EMULATOR_THREADS === '0' ? startService : onThread;
const [fauxqs, mock] = await Promise.all([start('fauxqs'), start('mock')]);
const hub = await startRealtimeHub({
  port: 0, host: '127.0.0.1',
  verifyToken: () => Promise.reject(new Error('this hub takes no subscribers')),
  policy: { adminClaim: 'admin', adminGroup: 'admin', audiences: [] },
  publisher: { region: HUB_PUBLISHER.region, credentials: { ...HUB_PUBLISHER.credentials } },
});
const moto = await startMoto().catch((err: unknown) => {
  if (err instanceof MotoUnavailableError) return undefined;
  throw err;
});
const endpoints: EmulatorEndpoints = { sqsEndpoint: fauxqs.url, mockAiUrl: mock.url, realtimeHttpEndpoint: hub.httpEndpoint, ...(moto ? { awsEndpoint: moto.endpoint } : {}) };
const counters = process.argv.includes('--count')
  ? await Promise.all([startAwsCallCounter(endpoints.sqsEndpoint), ...(moto ? [startAwsCallCounter(moto.endpoint)] : [])])
  : [];
if (counters[0]) {
  endpoints.sqsEndpoint = counters[0].url;
  if (counters[1]) endpoints.awsEndpoint = counters[1].url;
  endpoints.counts = { sqs: counters[0].countsUrl, ...(counters[1] ? { aws: counters[1].countsUrl } : {}) };
}
process.stdout.write(`${JSON.stringify(endpoints)}\n`);
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void Promise.all([...counters.map((c) => c.close()), fauxqs.stop(), mock.stop(), hub.stop(), moto?.stop()]).then(() => process.exit(0));
};
process.on('SIGTERM', stop);
// The parent holds our stdin: its end (the parent finished, or died) stops everything.
process.stdin.on('end', stop).resume();
