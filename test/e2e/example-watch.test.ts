/**
 * examples/watch-job.ts (`npm run example:watch`), the API users' example, run as a process against the local
 * runtime: it creates a job (or takes one), prints its text as it streams and its statuses, and exits 0 when the
 * job succeeded.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';

const EXAMPLE = fileURLToPath(new URL('../../examples/watch-job.ts', import.meta.url));

let e: E2e;
let alice: string;
beforeAll(async () => {
  e = await startE2e();
  alice = await e.token('alice');
}, 60_000);
afterAll(async () => e?.stop());

async function runExample(args: string[], token: string | undefined): Promise<{ code: number; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, AI_JOBS_API_URL: e.runtime.url };
  if (token) env.AI_JOBS_TOKEN = token;
  else delete env.AI_JOBS_TOKEN;
  const child = spawn(process.execPath, ['--import', 'tsx', EXAMPLE, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += String(chunk)));
  child.stderr.on('data', (chunk) => (err += String(chunk)));
  const [code] = await once(child, 'exit');
  return { code: code as number, out, err };
}

describe('npm run example:watch', () => {
  it('creates a Feynman evaluation, prints its feedback as it streams, and ends with the result route', async () => {
    const run = await runExample([], alice);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const jobId = /created ([0-9A-Z]{26})/.exec(run.out)![1]!;
    const { body } = await e.api('GET', `/api/ai/feynman-evaluations/${jobId}`, { token: alice });
    expect(run.out).toContain('[live: realtime push]');
    expect(run.out).toContain('[running, attempt 1]');
    expect(run.out).toContain(body.evaluation.feedback);
    expect(run.out).toContain(`done: succeeded — the result: GET /api/ai/feynman-evaluations/${jobId}`);
  });

  it('watches a given job, and says what to do without a token', async () => {
    const created = await e.api('POST', '/api/ai/quiz-generations', { token: alice, body: { sourceText: 'Ice floats.', count: 2, difficulty: 'easy' } });
    const run = await runExample([created.body.jobId], alice);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/questions\[1\]: \{/);
    const refused = await runExample([], undefined);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('Set AI_JOBS_TOKEN');
  });
});
