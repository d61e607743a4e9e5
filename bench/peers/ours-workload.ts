/** The job every "ours" run creates: the feynman_evaluation type, whose projection writes one FeynmanEvaluation row. */
export const BENCH_JOB_TYPE = 'feynman_evaluation';
/** Its HTTP collection (lib/api/routes.ts). */
export const BENCH_JOB_PATH = '/api/ai/feynman-evaluations';

export const benchUserId = (u: number): string => `bench-peers-${u}`;

export function benchInput(runId: string, i: number): { concept: string; explanation: string } {
  return { concept: `Concept ${runId}-${i}`, explanation: `Explanation ${i}: energy is conserved.` };
}
