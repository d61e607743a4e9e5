/**
 * `npm run bench:provider-call`: the CPU one streamed provider call costs the caller, alone — the consumer's
 * provider client (lib/ai/openai-compatible-provider.ts: the `openai` SDK's request, the event stream's reading
 * and folding) against the mock chat-completions server in a process of its own (bench/emulators.ts), with
 * bench:peers' workload (the same prompt, one event per token). Whole-process figures drift on a shared machine;
 * this one has nothing else in its process, so a change to the stream's reading shows in a few seconds.
 *
 * BENCH_CALLS (2,000) calls, BENCH_CONCURRENCY (4) at a time, after BENCH_WARMUP (300) untimed ones.
 * Prints `provider_call cpu_ms_per_call=<user+system ms of this process per call> … deltas_per_call=<…>`.
 */
import { OpenAiCompatibleProvider } from '../lib/ai/openai-compatible-provider.ts';
import { positiveNumber } from './peers/config.ts';
import { startEmulators } from './peers/emulator-process.ts';
import { workloadFromEnv } from './peers/workload.ts';

const calls = Math.floor(positiveNumber('BENCH_CALLS', 2000));
const concurrency = Math.floor(positiveNumber('BENCH_CONCURRENCY', 4));
const warmup = Math.floor(Number(process.env.BENCH_WARMUP ?? 300));
const workload = workloadFromEnv();

const emulators = await startEmulators();
try {
  const provider = new OpenAiCompatibleProvider({ name: 'mock', baseURL: emulators.endpoints.mockAiUrl });
  let deltas = 0;
  const call = async (i: number) => {
    const input = workload.input('provider-call', i);
    const reply = await provider.complete(
      { model: 'mock-chat', jsonMode: true, messages: [{ role: 'system', content: workload.prompt.system }, { role: 'user', content: workload.prompt.render(input) }] },
      { apiKey: 'mock-key', signal: new AbortController().signal, onDelta: () => { deltas += 1; } },
    );
    if (!reply.content) throw new Error('an empty answer');
  };
  const run = async (n: number) => {
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < n) await call(next++);
    }));
  };
  await run(warmup);
  deltas = 0;
  const before = process.cpuUsage();
  const start = performance.now();
  await run(calls);
  const used = process.cpuUsage(before);
  const seconds = (performance.now() - start) / 1000;
  console.log(`provider_call workload=${workload.name} calls=${calls} concurrency=${concurrency} seconds=${seconds.toFixed(1)}`);
  console.log(`provider_call cpu_ms_per_call=${((used.user + used.system) / 1000 / calls).toFixed(3)} user=${(used.user / 1000 / calls).toFixed(3)} system=${(used.system / 1000 / calls).toFixed(3)} deltas_per_call=${(deltas / calls).toFixed(1)}`);
} finally {
  await emulators.stop();
}
