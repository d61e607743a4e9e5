/**
 * The services the engine talks to over the network in production (SQS, the AI provider, EventBridge and KMS),
 * run in a process of their own for benchmarks: fauxqs, the mock chat-completions server, the local realtime hub
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
import { startFauxqs } from 'fauxqs';
import { startMockAiServer } from '../lib/dev/mock-ai-server.ts';
import { jobTypeMockResponder } from '../lib/dev/mock-responder.ts';
import { MotoUnavailableError, startMoto } from '../lib/dev/moto.ts';
import { freePort } from '../lib/dev/ports.ts';
import { startRealtimeHub } from '../lib/dev/local-runtime/realtime-hub.ts';
import { startAwsCallCounter } from './capacity/aws-call-counter.ts';

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

const fauxqs = await startFauxqs({ port: await freePort(), host: '127.0.0.1', logger: false } as Parameters<typeof startFauxqs>[0]);
const mock = await startMockAiServer({ respond: jobTypeMockResponder, apiKey: 'mock-key' });
const hub = await startRealtimeHub({
  port: 0, host: '127.0.0.1',
  verifyToken: () => Promise.reject(new Error('this hub takes no subscribers')),
  policy: { adminClaim: 'admin', adminGroup: 'admin', audiences: [] },
  publisher: { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } },
});
const moto = await startMoto().catch((err: unknown) => {
  if (err instanceof MotoUnavailableError) return undefined;
  throw err;
});
const endpoints: EmulatorEndpoints = { sqsEndpoint: `http://127.0.0.1:${fauxqs.port}`, mockAiUrl: mock.url, realtimeHttpEndpoint: hub.httpEndpoint, ...(moto ? { awsEndpoint: moto.endpoint } : {}) };
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
  void Promise.all([...counters.map((c) => c.close()), fauxqs.stop(), mock.close(), hub.stop(), moto?.stop()]).then(() => process.exit(0));
};
process.on('SIGTERM', stop);
// The parent holds our stdin: its end (the parent finished, or died) stops everything.
process.stdin.on('end', stop).resume();
