/**
 * The peers bench's workloads: a peer's result rows come from the same mock answer our projection gets, in one
 * statement whose placeholders line up with its values, and the projector's checks beyond the schema hold.
 */
import { describe, expect, it } from 'vitest';
import { jobTypeMockResponder } from '../../lib/dev/mock-responder.ts';
import { BENCH_WORKLOADS, workloadFromEnv } from '../../bench/peers/workload.ts';

describe('the peers bench workloads', () => {
  it.each(BENCH_WORKLOADS.map((w) => [w.name, w] as const))('%s: the mock answer passes the checks and becomes one INSERT', (_name, workload) => {
    const input = workload.input('run', 7);
    const answer = jobTypeMockResponder({ messages: [{ role: 'system', content: workload.prompt.system }, { role: 'user', content: workload.prompt.render(input) }] });
    const output = workload.outputSchema.parse(answer);
    workload.check(input, output);
    const insert = workload.resultInsert({ system: 'peer', key: 'run-7', userId: 'u7', input, output });
    const placeholders = [...insert.sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
    expect(placeholders).toEqual(insert.values.map((_, i) => i + 1));
    expect(insert.sql).toContain(workload.resultTable);
    expect(workload.resultTableSql).toContain(workload.resultTable);
    expect(workload.maxAttempts).toBeGreaterThanOrEqual(2);
  });

  it('quiz: two questions asked, two rows written; a different count fails the check', () => {
    const quiz = workloadFromEnv({ BENCH_WORKLOAD: 'quiz' });
    const input = quiz.input('run', 1) as { count: number };
    expect(input.count).toBe(2);
    const answer = jobTypeMockResponder({ messages: [{ role: 'system', content: quiz.prompt.system }, { role: 'user', content: quiz.prompt.render(input) }] });
    const output = quiz.outputSchema.parse(answer) as { questions: unknown[] };
    expect(quiz.resultInsert({ system: 'peer', key: 'k', userId: 'u', input, output }).values).toHaveLength(2 * 9);
    expect(() => quiz.check({ ...input, count: 3 }, output)).toThrow(/2 questions, 3 requested/);
  });

  it('refuses an unknown BENCH_WORKLOAD by name', () => {
    expect(() => workloadFromEnv({ BENCH_WORKLOAD: 'essay' })).toThrow(/BENCH_WORKLOAD="essay": expected one of quiz, feynman/);
  });
});
