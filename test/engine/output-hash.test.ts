/**
 * ADR-003 §5.6: the output hash makes projection idempotent — the same output for a job that already
 * succeeded is recognised and writes nothing; a different one is refused and logged. And a job type without
 * a projector runs end to end to `succeeded`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import { getPrisma } from '../../lib/db/client.ts';
import { hashCanonical } from '../../lib/jobs/canonical-json.ts';
import { OutputConflictError, projectResult } from '../../lib/engine/project.ts';
import { usageStatement, UsageRow } from '../../lib/engine/usage-ledger.ts';
import type { AttemptResult } from '../../lib/engine/attempt.ts';
import { countRows } from '../helpers/db.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

/** Keeps what was logged at error level. */
class RecordingLogger extends Logger {
  readonly errors: { message: string; extra: unknown[] }[] = [];
  override error(message: string, ...extra: unknown[]): void {
    this.errors.push({ message, extra });
  }
}

const db = getPrisma();
const registry = testRegistry();
const logger = new RecordingLogger({ serviceName: 'output-hash-test', logLevel: 'WARN' });
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ registry, engine: { logger } });
});
afterAll(async () => h.close());

async function writes(jobId: string) {
  return {
    artifacts: await countRows('AiJobArtifact', 'jobId = ?', [jobId]),
    transitions: await countRows('AiJobTransition', 'jobId = ?', [jobId]),
    outbox: await countRows('OutboxEvent', 'aggregateId = ?', [jobId]),
  };
}

describe('output hash', () => {
  it('a repeated projection of the same output is recognised and writes nothing; another output is refused and logged', async () => {
    const created = await h.create({ input: { prompt: 'project me once' } });
    const first = await db.aiJob.findUniqueOrThrow({ where: { id: created.id } });
    const done = await h.runUntilTerminal(created.id);
    expect(done.lifecycleStatus).toBe('succeeded');
    const before = await writes(created.id);
    // A stale worker that locked attempt 1 arrives with its answer after the job succeeded.
    const staleJob = { ...first, attemptCount: 1, leaseVersion: 1 };
    const fence = { holder: 'stale-worker', leaseVersion: 1 };
    const def = registry.get('synthetic_job');
    const output = { answer: 'whatever', echo: 'x' };
    const generated = { content: '{}', route: { provider: 'mock', model: 'm' }, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } } as AttemptResult['generated'];
    const usage = new UsageRow(usageStatement(staleJob, { route: generated.route, usage: generated.usage, latencyMs: 1 }, h.engine.price));
    const same: AttemptResult = { output, input: { prompt: 'project me once' }, outputHash: done.outputHash!, generated, usage };
    expect((await projectResult(staleJob, def, fence, same, h.engine)).kind).toBe('already_projected');
    expect(await writes(created.id)).toEqual(before);

    const other = { ...same, outputHash: hashCanonical({ answer: 'something else' }) };
    await expect(projectResult(staleJob, def, fence, other, h.engine)).rejects.toBeInstanceOf(OutputConflictError);
    expect(await writes(created.id)).toEqual(before);
    expect(await db.aiJob.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ lifecycleStatus: 'succeeded', outputHash: done.outputHash });
    expect(logger.errors.map((e) => e.message)).toContain('output refused: the job already succeeded with another output');
  });
});

describe('a job type without a projector', () => {
  it('runs end to end to succeeded, with its output hash and no artifact', async () => {
    const created = await h.create({ jobType: 'no_projector_job', input: { prompt: 'nothing to write' } });
    const done = await h.runUntilTerminal(created.id);
    expect(done).toMatchObject({ lifecycleStatus: 'succeeded', progress: 100 });
    expect(done.outputHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await countRows('AiJobArtifact', 'jobId = ?', [created.id])).toBe(0);
    expect(await countRows('OutboxEvent', "aggregateId = ? AND eventType = 'ai.job.succeeded'", [created.id])).toBe(1);
  });
});
