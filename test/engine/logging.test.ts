/** ADR-003 §8.3: logs carry ids, outcome, latency and token counts — never input, output, snapshot or key. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import { getPrisma } from '../../lib/db/client.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ registry: testRegistry(), engine: { logger: new Logger({ serviceName: 'engine-log-test', logLevel: 'DEBUG' }) } });
});
afterAll(async () => h.close());

/** Captures everything written to stdout and stderr while `fn` runs. */
async function captureOutput(fn: () => Promise<void>): Promise<string> {
  const chunks: string[] = [];
  const original = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  const tap = (chunk: unknown) => {
    chunks.push(String(chunk));
    return true;
  };
  process.stdout.write = tap as typeof process.stdout.write;
  process.stderr.write = tap as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stdout.write = original.out;
    process.stderr.write = original.err;
  }
  return chunks.join('');
}

describe('engine logs', () => {
  it('log the outcome of every delivery without input text, output, or secrets', async () => {
    const secret = 'sk-THISMUSTNEVERBELOGGED0123456789';
    const inputText = 'Purple elephants negotiate tariffs at dawn';
    let ids: string[] = [];
    const output = await captureOutput(async () => {
      const ok = await h.create({ input: { prompt: `${inputText} ${secret}` } });
      const failing = await h.create({ jobType: 'quick_retry_job', input: { prompt: `${inputText} again`, scenario: 'unauthorized' } });
      ids = [ok.id, failing.id];
      await h.deliver();
      await h.deliver('interactive', 0);
    });
    const jobs = await getPrisma().aiJob.findMany({ where: { id: { in: ids } } });
    expect(jobs.map((j) => j.lifecycleStatus).sort()).toEqual(['failed', 'succeeded']);
    for (const id of ids) expect(output).toContain(id);
    expect(output).toContain('job delivery finished');
    for (const forbidden of [secret, inputText, 'Purple', 'mock-key', '"answer"']) expect(output).not.toContain(forbidden);
  });
});
