/** The CLI against the running local runtime, over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-run.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';

let e: E2e;
let user: string;
let admin: string;
beforeAll(async () => {
  e = await startE2e();
  [user, admin] = await Promise.all([e.token('cli-user'), e.token('cli-admin', { admin: true })]);
});
afterAll(async () => e.stop());

/** Runs the CLI as `user` (or `token`), capturing what it writes. */
const cli = (args: string[], token = user) => runCli(e.runtime.url, args, token);

describe('cli', () => {
  it('creates a job and watches it to success with a progress bar', async () => {
    const run = await cli(['create', 'feynman', '--concept', 'Gravity', '--text', 'Mass attracts mass.', '--watch']);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/created [0-9A-Z]{26}/);
    expect(run.out).toMatch(/succeeded +\[#{30}\] 100%/);
    expect(run.out).toMatch(/result: 1 artifact\(s\) FeynmanEvaluation\//);
  });

  it('--watch prints the model\'s text as it is written, between status lines, and the final text is the result\'s', async () => {
    const run = await cli(['create', 'feynman', '--concept', 'Streams', '--text', 'Water flows downhill. [tps:60]', '--watch']);
    expect(run.code).toBe(0);
    const jobId = /created ([0-9A-Z]{26})/.exec(run.out)![1]!;
    const { body } = await e.api('GET', `/api/ai/feynman-evaluations/${jobId}`, { token: user });
    const lines = run.out.split('\n');
    const statusAt = (status: string) => lines.findIndex((l) => new RegExp(`^\\S+Z ${status} `).test(l));
    expect(lines[statusAt('running')]).toMatch(/running +\[-{30}\] +0% attempt 1$/);
    // The text, on its own line between `running` and `succeeded`, is exactly the result's feedback.
    const textLine = lines.findIndex((l) => l.startsWith('feedback: '));
    expect(textLine).toBeGreaterThan(statusAt('running'));
    expect(statusAt('succeeded')).toBeGreaterThan(textLine);
    expect(lines[textLine]).toBe(`feedback: ${body.evaluation.feedback}`);
    expect(run.out).toContain(`gaps[0]: ${JSON.stringify(body.evaluation.gaps[0])}`);
  });

  it('watch <jobId> prints a quiz\'s questions one by one as each is complete', async () => {
    const created = await cli(['create', 'quiz', '--text', 'Light travels fast. [tps:200]', '--count', '3', '--difficulty', 'easy']);
    const jobId = JSON.parse(created.out).jobId as string;
    const run = await cli(['watch', jobId]);
    expect(run.code).toBe(0);
    const { body } = await e.api('GET', `/api/ai/quiz-generations/${jobId}`, { token: user });
    const printed = run.out.split('\n').filter((l) => l.startsWith('questions['));
    expect(printed.length).toBe(body.questions.length);
    printed.forEach((line, i) => expect(line).toMatch(new RegExp(`^questions\\[${i}\\]: \\{`)));
    expect(run.out).toMatch(/succeeded +\[#{30}\] 100%/);
  });

  it('watch refuses another user\'s job with the API\'s code', async () => {
    const created = await cli(['create', 'quiz', '--text', 'Private.', '--count', '2', '--difficulty', 'easy']);
    const jobId = JSON.parse(created.out).jobId as string;
    const run = await cli(['watch', jobId], admin);
    expect(run.code).toBe(1);
    expect(run.err).toContain('error JOB_NOT_FOUND (HTTP 404)');
  });

  it('sends an idempotency key on every create: its own per invocation, or the one given (a rerun returns the same job)', async () => {
    const { getPrisma } = await import('../../lib/db/client.ts');
    const args = ['create', 'quiz', '--text', 'Keys make retries safe.', '--count', '2', '--difficulty', 'easy'];
    const [a, b] = [JSON.parse((await cli(args)).out).jobId as string, JSON.parse((await cli(args)).out).jobId as string];
    expect(a).not.toBe(b);
    const keys = (await getPrisma().aiJob.findMany({ where: { id: { in: [a, b] } }, select: { idempotencyKey: true } })).map((j) => j.idempotencyKey);
    expect(keys).toEqual([expect.stringMatching(/^cli-[0-9a-f-]{36}$/), expect.stringMatching(/^cli-[0-9a-f-]{36}$/)]);
    expect(keys[0]).not.toBe(keys[1]);
    const first = JSON.parse((await cli([...args, '--idempotency-key', 'rerun-1'])).out).jobId as string;
    expect(JSON.parse((await cli([...args, '--idempotency-key', 'rerun-1'])).out).jobId).toBe(first);
  });

  it('lists, gets and refuses to cancel a finished job with the API error code', async () => {
    const created = await cli(['create', 'quiz', '--text', 'Water boils at 100 C at sea level.', '--count', '2', '--difficulty', 'easy']);
    const jobId = JSON.parse(created.out).jobId as string;
    expect((await cli(['watch', jobId])).code).toBe(0);
    const list = await cli(['list', '--status', 'succeeded', '--type', 'quiz_generation']);
    expect(JSON.parse(list.out).items.map((j: { jobId: string }) => j.jobId)).toContain(jobId);
    expect(JSON.parse((await cli(['get', jobId])).out).lifecycleStatus).toBe('succeeded');
    const cancel = await cli(['cancel', jobId]);
    expect(cancel.code).toBe(1);
    expect(cancel.err).toContain('JOB_NOT_CANCELLABLE');
    const adminCancel = await cli(['admin-cancel', jobId], admin);
    expect(adminCancel.code).toBe(1);
    expect(adminCancel.err).toContain('JOB_NOT_CANCELLABLE');
  });

  it('runs admin commands for admins only, and explains bad usage', async () => {
    expect((await cli(['stats'], admin)).code).toBe(0);
    const today = new Date().toISOString().slice(0, 10);
    const usageToday = await cli(['usage', '--from', today, '--to', today, '--type', 'feynman_evaluation'], admin);
    expect(usageToday.code).toBe(0);
    expect(JSON.parse(usageToday.out)).toMatchObject({ from: today, to: today });
    const top = await cli(['usage', '--by-user', '--top', '1'], admin);
    expect(top.code).toBe(0);
    expect(JSON.parse(top.out)).toMatchObject({ userCount: expect.any(Number), rows: expect.any(Array) });
    expect(new Set(JSON.parse(top.out).rows.map((r: { userId: string }) => r.userId)).size).toBeLessThanOrEqual(1);
    expect((await cli(['usage', '--by-user', '--top', '0'], admin)).err).toContain('query.limit');
    const topAlone = await cli(['usage', '--top', '3'], admin);
    expect(topAlone.code).toBe(2);
    expect(topAlone.err).toContain('--top lists users: use it with --by-user');
    const forbidden = await cli(['stats']);
    expect(forbidden.code).toBe(1);
    expect(forbidden.err).toContain('FORBIDDEN');
    const usage = await cli(['create', 'poem', '--text', 'x']);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain('unknown kind');
    expect((await cli(['create', 'feynman', '--text', 'no concept'])).err).toContain('--concept is required');
  });
});
