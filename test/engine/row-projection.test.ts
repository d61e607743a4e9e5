/**
 * The one-round-trip projection (lib/engine/project.ts): a projector with `rows` has its projection run as one
 * script on the raw pool, every write gated on the success claim. It must write exactly what the Prisma
 * transaction path writes, and refuse exactly as it does: an already succeeded job (same output: nothing
 * written; another output: refused), a cancel request, a lost lease, a business validation failure — each
 * with nothing written. A script too large for RDS Proxy's 16 KB falls back to the transaction path.
 * The ledger row of the call that answered travels with the projection, outside its transaction: written
 * once on every path, refusals included (the call happened), and never twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma, type AiJob } from '../../lib/db/client.ts';
import { hashCanonical } from '../../lib/jobs/canonical-json.ts';
import { OutputConflictError, projectResult } from '../../lib/engine/project.ts';
import type { AttemptResult } from '../../lib/engine/attempt.ts';
import { usageStatement, UsageRow } from '../../lib/engine/usage-ledger.ts';
import type { EngineDeps } from '../../lib/engine/engine-deps.ts';
import { projectorRegistry } from '../../lib/jobs/projector-registry.ts';
import type { ResultProjector } from '../../lib/jobs/projector.ts';
import type { JobTypeModule } from '../../lib/job-types/job-type-module.ts';
import { feynmanEvaluationModule } from '../../lib/job-types/feynman-evaluation.ts';
import { quizGenerationModule } from '../../lib/job-types/quiz-generation.ts';
import { flashcardGenerationModule } from '../../lib/job-types/flashcard-generation.ts';
import { countRows, rawDb } from '../helpers/db.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';
import { insertJobWithInput } from '../job-types/helpers.ts';

const db = getPrisma();
const HOLDER = 'worker-rows';
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ registry: testRegistry() });
});
afterAll(async () => h.close());

/** The engine's deps with each projector's `project` counted (the transaction path calls it; `rows` never does). */
const projectCalls: string[] = [];
function countingDeps(): EngineDeps {
  const get = (key: string): ResultProjector => {
    const p = projectorRegistry.get(key);
    return { ...p, project: async (...args: Parameters<ResultProjector['project']>) => {
      projectCalls.push(key);
      return p.project(...args);
    } };
  };
  return { ...h.engine, projectors: { ...projectorRegistry, get } as EngineDeps['projectors'] };
}

/** The engine's deps with every projector on the Prisma transaction path (no `rows`). */
function transactionPathDeps(): EngineDeps {
  const get = (key: string): ResultProjector => ({ ...projectorRegistry.get(key), rows: undefined }) as ResultProjector;
  return { ...h.engine, projectors: { ...projectorRegistry, get } as EngineDeps['projectors'] };
}

const CASES: { module: JobTypeModule<unknown, unknown>; input: unknown; table: string }[] = [
  { module: feynmanEvaluationModule as JobTypeModule<unknown, unknown>, input: { concept: 'Osmosis', explanation: 'Water moves across a membrane.' }, table: 'FeynmanEvaluation' },
  { module: quizGenerationModule as JobTypeModule<unknown, unknown>, input: { sourceText: 'Cells divide. Plants grow. Water flows.', count: 3, difficulty: 'easy' }, table: 'QuizQuestion' },
  { module: flashcardGenerationModule as JobTypeModule<unknown, unknown>, input: { sourceText: 'Cells divide. Plants grow.', maxCards: 5 }, table: 'Flashcard' },
];

/** A running job of the case's type locked by HOLDER at lease version 1, and the attempt's result. */
async function lockedJob(c: (typeof CASES)[number], input = c.input): Promise<{ job: AiJob; result: AttemptResult }> {
  const job = await insertJobWithInput(c.module, input, { lockedBy: HOLDER, leaseVersion: 1, attemptCount: 1, lockUntil: new Date(Date.now() + 60_000) });
  const def = c.module.definition;
  const parsedInput = (def.inputSchema as { parse(v: unknown): unknown }).parse(input);
  const userMessage = c.module.prompt.render(parsedInput as never);
  const output = (def.outputSchema as { parse(v: unknown): unknown }).parse(c.module.mockResponse(userMessage));
  const generated = { content: JSON.stringify(output), route: { provider: 'mock', model: 'mock-1' }, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } } as AttemptResult['generated'];
  const usage = new UsageRow(usageStatement(job, { route: generated.route, usage: generated.usage, latencyMs: 5 }, h.engine.price));
  return { job, result: { output, input: parsedInput, outputHash: hashCanonical(output), generated, usage } };
}

const fence = { holder: HOLDER, leaseVersion: 1 };

/** What a projection left behind for `jobId`, ids and times left out. */
async function written(table: string, jobId: string) {
  const [rows] = await (await rawDb()).query(`SELECT * FROM \`${table}\` WHERE jobId = ? ORDER BY ${table === 'FeynmanEvaluation' ? 'id' : 'ordinal'}`, [jobId]);
  const strip = ({ id: _id, jobId: _j, createdAt: _c, ...rest }: Record<string, unknown>) => rest;
  const job = await db.aiJob.findUniqueOrThrow({ where: { id: jobId } });
  return {
    rows: (rows as Record<string, unknown>[]).map(strip),
    job: { lifecycleStatus: job.lifecycleStatus, outputHash: job.outputHash, progress: job.progress, lockedBy: job.lockedBy, modelName: job.modelName, finished: job.finishedAt !== null },
    artifacts: await countRows('AiJobArtifact', 'jobId = ?', [jobId]),
    transitions: (await db.aiJobTransition.findMany({ where: { jobId }, select: { fromStatus: true, toStatus: true, leaseVersion: true, actor: true } })),
    events: await countRows('OutboxEvent', "aggregateId = ? AND eventType = 'ai.job.succeeded'", [jobId]),
    usage: await countRows('AiUsageLog', 'jobId = ?', [jobId]),
  };
}

describe.each(CASES)('$table: the one-round-trip projection', (c) => {
  it('writes exactly what the transaction path writes', async () => {
    const viaRows = await lockedJob(c);
    const viaTx = await lockedJob(c);
    projectCalls.length = 0;
    expect((await projectResult(viaRows.job, c.module.definition as never, fence, viaRows.result, countingDeps())).kind).toBe('projected');
    expect(projectCalls).toEqual([]); // the rows path: one script, the projector's transaction method never ran
    expect((await projectResult(viaTx.job, c.module.definition as never, fence, viaTx.result, transactionPathDeps())).kind).toBe('projected');
    const a = await written(c.table, viaRows.job.id);
    const b = await written(c.table, viaTx.job.id);
    expect(a.rows.length).toBeGreaterThan(0);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ job: { lifecycleStatus: 'succeeded', progress: 100, lockedBy: null, modelName: 'mock-1', finished: true }, events: 1, usage: 1 });
    expect(a.artifacts).toBe(a.rows.length);
    expect(a.transitions).toEqual([{ fromStatus: 'running', toStatus: 'succeeded', leaseVersion: 1, actor: h.engine.instanceId }]);
  });
});

describe('the one-round-trip projection refuses as the transaction path does, writing nothing', () => {
  const feynman = CASES[0]!;
  const def = feynman.module.definition as never;

  it('a job that already succeeded: the same output is recognised, another is refused', async () => {
    const { job, result } = await lockedJob(feynman);
    expect((await projectResult(job, def, fence, result, h.engine)).kind).toBe('projected');
    const before = await written(feynman.table, job.id);
    expect((await projectResult(job, def, fence, result, h.engine)).kind).toBe('already_projected');
    await expect(projectResult(job, def, fence, { ...result, outputHash: hashCanonical({ other: true }) }, h.engine)).rejects.toBeInstanceOf(OutputConflictError);
    expect(await written(feynman.table, job.id)).toEqual(before);
  });

  it('a cancel requested before the projection: CancelRequestedError', async () => {
    const { job, result } = await lockedJob(feynman);
    await db.aiJob.update({ where: { id: job.id }, data: { cancelRequestedAt: new Date() } });
    await expect(projectResult(job, def, fence, result, h.engine)).rejects.toMatchObject({ code: 'CANCEL_REQUESTED' });
    expect(await written(feynman.table, job.id)).toMatchObject({ rows: [], artifacts: 0, transitions: [], events: 0, usage: 1, job: { lifecycleStatus: 'running' } });
  });

  it('a lease lost to another worker: LeaseLostError', async () => {
    const { job, result } = await lockedJob(feynman);
    await db.aiJob.update({ where: { id: job.id }, data: { lockedBy: 'worker-other', leaseVersion: 2 } });
    await expect(projectResult(job, def, fence, result, h.engine)).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect(await written(feynman.table, job.id)).toMatchObject({ rows: [], artifacts: 0, transitions: [], events: 0, usage: 1 });
  });

  it('a business validation failure (a quiz of the wrong length): refused before anything is sent', async () => {
    const quiz = CASES[1]!;
    const { job, result } = await lockedJob(quiz);
    const short = { questions: (result.output as { questions: unknown[] }).questions.slice(0, 1) };
    await expect(projectResult(job, quiz.module.definition as never, fence, { ...result, output: short, outputHash: hashCanonical(short) }, h.engine))
      .rejects.toMatchObject({ code: 'BUSINESS_VALIDATION' });
    // Nothing sent, the ledger row included: the engine writes it on the failure path (run-job.ts).
    expect(await written(quiz.table, job.id)).toMatchObject({ rows: [], artifacts: 0, transitions: [], events: 0, usage: 0, job: { lifecycleStatus: 'running' } });
  });

  it('an output too large for one statement under 16 KB takes the transaction path, with the same result', async () => {
    const cards = CASES[2]!;
    const long = 'Cells divide by mitosis and grow again. '.repeat(22); // 20 cards of ~900 characters: over the script limit
    const { job, result } = await lockedJob(cards, { sourceText: `${long}. ${'Plants grow. '.repeat(30)}`, maxCards: 20 });
    const output = { cards: Array.from({ length: 20 }, (_, i) => ({ front: `Card ${i}`, back: long })) };
    const big = { ...result, output, outputHash: hashCanonical(output) };
    projectCalls.length = 0;
    expect((await projectResult(job, cards.module.definition as never, fence, big, countingDeps())).kind).toBe('projected');
    expect(projectCalls).toEqual(['flashcard_generation']);
    expect(await written(cards.table, job.id)).toMatchObject({ artifacts: 20, events: 1, usage: 1, job: { lifecycleStatus: 'succeeded' } });
  });
});
