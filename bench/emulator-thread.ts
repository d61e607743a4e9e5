/**
 * One emulated service on a worker thread of bench/emulators.ts: `fauxqs` (SQS) or `mock` (the chat-completions
 * provider). On AWS each is a service of its own, so one's load never delays another's answers; on one event loop
 * they did: an SQS send waited behind the mock streaming answers and the realtime hub checking signatures
 * (`SendMessageBatch` of one message at 80 a second, 6 streamed answers always in flight, 3 alternating pairs of
 * 800 sends: p50 2.6–2.8 ms on threads against 2.9–3.7 on one loop). Posts
 * `{ url }` once it listens; stops on the message `'stop'` and posts `'stopped'`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startFauxqs } from 'fauxqs';
import { startMockAiServer } from '../lib/dev/mock-ai-server.ts';
import { jobTypeMockResponder } from '../lib/dev/mock-responder.ts';
import { freePort } from '../lib/dev/ports.ts';

export type EmulatedService = 'fauxqs' | 'mock';

/** Starts `service` on this thread; returns its URL and how to stop it. */
export async function startService(service: EmulatedService): Promise<{ url: string; stop(): Promise<void> }> {
  if (service === 'fauxqs') {
    const fauxqs = await startFauxqs({ port: await freePort(), host: '127.0.0.1', logger: false } as Parameters<typeof startFauxqs>[0]);
    return { url: `http://127.0.0.1:${fauxqs.port}`, stop: () => fauxqs.stop() };
  }
  const mock = await startMockAiServer({ respond: jobTypeMockResponder, apiKey: 'mock-key' });
  return { url: mock.url, stop: () => mock.close() };
}

if (parentPort && workerData) {
  const port = parentPort;
  const running = await startService((workerData as { service: EmulatedService }).service);
  port.on('message', (m: unknown) => {
    if (m === 'stop') void running.stop().finally(() => port.postMessage('stopped'));
  });
  port.postMessage({ url: running.url });
}
