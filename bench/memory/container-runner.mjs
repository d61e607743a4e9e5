// One Lambda container as far as memory and CPU go, for bench/memory.ts: plain Node (no TypeScript loader, as
// Lambda runs the bundle), imports a bundled handler once (the INIT phase), then handles the events the parent
// sends over IPC one after another, as Lambda hands a container one batch at a time.
//
// Memory is sampled every SAMPLE_MS (process.memoryUsage(): rss, heapUsed, heapTotal, external, arrayBuffers)
// and the peak of each kept; the peak RSS is also the kernel's (resourceUsage().maxRSS), which no sample can
// miss. The sampler's own CPU is measured once (CALIBRATION calls) and taken off the CPU figures.
//
// argv: <bundle path> <function timeout ms>. Messages in: {kind:'invoke', event} | {kind:'report'}.
// Messages out: {kind:'loaded', ...} | {kind:'done', response, ...} | {kind:'report', ...}.
import { randomUUID } from 'node:crypto';

const SAMPLE_MS = 20;
const CALIBRATION = 500;
const [bundle, timeoutArg] = process.argv.slice(2);
const timeoutMs = Number(timeoutArg);

const KEYS = ['rss', 'heapUsed', 'heapTotal', 'external', 'arrayBuffers'];
const peaks = Object.fromEntries(KEYS.map((k) => [k, 0]));
let samples = 0;
const sample = () => {
  const m = process.memoryUsage();
  for (const k of KEYS) if (m[k] > peaks[k]) peaks[k] = m[k];
  samples += 1;
  return m;
};
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const importStart = performance.now();
const importCpuStart = cpuMs();
const mod = await import(bundle);
const loaded = {
  kind: 'loaded', importMs: performance.now() - importStart, sinceStartMs: performance.now(),
  importCpuMs: cpuMs() - importCpuStart, processCpuMs: cpuMs(), memory: process.memoryUsage(),
};

// The sampler's cost, measured before any event so it is not mixed with the handler's work.
const calStart = cpuMs();
for (let i = 0; i < CALIBRATION; i += 1) sample();
const sampleCpuMs = (cpuMs() - calStart) / CALIBRATION;
samples = 0;
const timer = setInterval(sample, SAMPLE_MS);
timer.unref();
process.send(loaded);

async function invoke(event) {
  const deadline = Date.now() + timeoutMs;
  const context = {
    functionName: 'bench-memory', functionVersion: '$LATEST', invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:bench-memory',
    memoryLimitInMB: '0', awsRequestId: randomUUID(), logGroupName: '/aws/lambda/bench-memory', logStreamName: 'bench',
    callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => deadline - Date.now(),
    done() {}, fail() {}, succeed() {},
  };
  const cpuStart = cpuMs();
  const samplesStart = samples;
  const start = performance.now();
  const response = await mod.handler(event, context);
  const wallMs = performance.now() - start;
  const cpu = cpuMs() - cpuStart - (samples - samplesStart) * sampleCpuMs;
  return { kind: 'done', response, wallMs, cpuMs: cpu, memory: sample() };
}

// The parent gone (killed, crashed): nothing will ask for a report.
process.on('disconnect', () => process.exit(0));

process.on('message', (msg) => {
  if (msg.kind === 'invoke') {
    invoke(msg.event).then(
      (done) => process.send(done),
      (err) => process.send({ kind: 'done', error: `${err?.name}: ${err?.message}` }),
    );
  } else if (msg.kind === 'report') {
    sample();
    process.send({
      kind: 'report', peaks, maxRssBytes: process.resourceUsage().maxRSS * 1024, samples, sampleCpuMs,
      processCpuMs: cpuMs() - samples * sampleCpuMs - CALIBRATION * sampleCpuMs, memory: process.memoryUsage(),
    }, () => process.exit(0));
  }
});
