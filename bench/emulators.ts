/**
 * The services the engine talks to over the network in production (SQS, the AI provider), run in a process of
 * their own for benchmarks: fauxqs and the mock chat-completions server. Prints one JSON line with their URLs,
 * then runs until killed.
 */
import { startFauxqs } from 'fauxqs';
import { startMockAiServer } from '../lib/dev/mock-ai-server.ts';
import { jobTypeMockResponder } from '../lib/dev/mock-responder.ts';
import { freePort } from '../lib/dev/ports.ts';

const fauxqs = await startFauxqs({ port: await freePort(), host: '127.0.0.1', logger: false } as Parameters<typeof startFauxqs>[0]);
const mock = await startMockAiServer({ respond: jobTypeMockResponder, apiKey: 'mock-key' });
process.stdout.write(`${JSON.stringify({ sqsEndpoint: `http://127.0.0.1:${fauxqs.port}`, mockAiUrl: mock.url })}\n`);
process.on('SIGTERM', () => {
  void Promise.all([fauxqs.stop(), mock.close()]).then(() => process.exit(0));
});
