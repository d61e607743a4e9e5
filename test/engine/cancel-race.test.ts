/**
 * Cancellation always wins (ADR-003 §1.4, §5.4): a cancel accepted while an attempt finishes ends the job
 * `cancelled`, never `succeeded`, with the provider call billed. Each race is landed deterministically through
 * the engine's checkpoints (no sleeps). Also: a job between attempts is cancelled by the request itself,
 * `execution.cancellable: false` refuses while running, and `security.outputRedaction` redacts the output.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';
import { getPrisma, type AiJob } from '../../lib/db/client.ts';
import { cancellableIn, requestCancel, type CancelOutcome } from '../../lib/jobs/cancellation.ts';
import { hashCanonical } from '../../lib/jobs/canonical-json.ts';
import type { EngineCheckpoints } from '../../lib/engine/engine-deps.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

const db = getPrisma();
const registry = testRegistry();
const checkpoints: EngineCheckpoints = {};
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ registry, engine: { checkpoints } });
});
afterAll(async () => h.close());

/** This worker's database, for a session of the test's own. */
function sideConnection() {
  const c = parseDatabaseUrl(process.env.DATABASE_URL ?? '');
  return { host: c.host, port: c.port, user: c.user, password: c.password, database: c.database, timezone: 'Z' as const };
}

const job = (id: string) => db.aiJob.findUniqueOrThrow({ where: { id } });
const events = (id: string, eventType: string) => db.outboxEvent.count({ where: { aggregateId: id, eventType } });

describe('a cancel landing while the attempt finishes', () => {
  it.each(['afterProviderAnswer', 'afterValidation', 'insideProjection'] as const)(
    'at %s: the job ends cancelled, the call is billed, nothing is projected', async (point) => {
      const created = await h.create({ input: { prompt: `cancel me at ${point}` } });
      let cancel: CancelOutcome | undefined;
      checkpoints[point] = async (j: AiJob) => {
        if (j.id === created.id) cancel = await requestCancel(db, j.id, { actor: 'api:user-1', ownerId: 'user-1' });
      };
      try {
        const { response } = await h.deliver();
        expect(response.batchItemFailures).toEqual([]);
      } finally {
        delete checkpoints[point];
      }
      expect(cancel?.outcome).toBe('cancel_requested');
      expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'cancelled', errorCode: 'CANCELLED', outputHash: null, lockedBy: null });
      expect(await db.aiUsageLog.count({ where: { jobId: created.id } })).toBe(1);
      expect(await db.aiJobArtifact.count({ where: { jobId: created.id } })).toBe(0);
      expect(await events(created.id, 'ai.job.succeeded')).toBe(0);
      expect(await events(created.id, 'ai.job.cancelled')).toBe(1);
    },
  );

  it('a cancel arriving while the projector writes finds the job row locked by the success claim, and is refused after it', async () => {
    let attempt: unknown;
    const projectors = { get: (key: string) => ({ ...h.engine.projectors.get(key), project: async (_tx: unknown, j: AiJob) => {
      // The cancel's compare-and-set, from another session that gives up after 1 s instead of waiting:
      // the success claim already holds the job row, so it cannot pass before the projection commits.
      const side = await mysql.createConnection({ ...sideConnection(), multipleStatements: true });
      try {
        await side.query('SET SESSION innodb_lock_wait_timeout = 1');
        attempt = await side.query("UPDATE AiJob SET cancelRequestedAt = NOW(3) WHERE id = ? AND lifecycleStatus = 'running' AND cancelRequestedAt IS NULL", [j.id])
          .then(() => 'updated', (err: unknown) => (err as { errno?: number }).errno);
      } finally {
        await side.end();
      }
      return [{ artifactType: 'SyntheticAnswer', artifactId: j.id, ordinal: 0 }];
    } }) };
    const r = await startEngineHarness({ registry, engine: { projectors } });
    try {
      const created = await r.create({ input: { prompt: 'cancel me while I project' } });
      expect((await r.runUntilTerminal(created.id)).lifecycleStatus).toBe('succeeded');
      expect(attempt).toBe(1205); // ER_LOCK_WAIT_TIMEOUT: the row was locked
      await expect(requestCancel(db, created.id, { actor: 'api:user-1', ownerId: 'user-1' })).rejects.toMatchObject({ code: 'JOB_NOT_CANCELLABLE' });
      expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'succeeded', cancelRequestedAt: null });
      expect(await events(created.id, 'ai.job.cancelled')).toBe(0);
    } finally {
      await r.close();
    }
  });

  it('a cancel arriving after the projection committed is refused: the job succeeded first', async () => {
    const created = await h.create({ input: { prompt: 'too late to cancel' } });
    expect((await h.runUntilTerminal(created.id)).lifecycleStatus).toBe('succeeded');
    await expect(requestCancel(db, created.id, { actor: 'api:user-1' })).rejects.toMatchObject({ code: 'JOB_NOT_CANCELLABLE' });
  });
});

describe('a job between attempts', () => {
  it('is cancelled by the request itself, not at its next delivery (minutes away)', async () => {
    const created = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'wait for me [scenario:rate_limit:3600]' } });
    const first = await h.deliver();
    expect(first.response.batchItemFailures).toHaveLength(1);
    const waiting = await job(created.id);
    // A 429 on the platform's key: the model cools down and the job waits for it, its attempt given back.
    expect(waiting).toMatchObject({ lifecycleStatus: 'running', lockedBy: null, attemptCount: 0 });
    expect(waiting.lockUntil!.getTime()).toBeGreaterThan(Date.now() + 60_000); // it is due after Retry-After

    const cancel = await requestCancel(db, created.id, { actor: 'api:user-1', ownerId: 'user-1' });
    expect(cancel.outcome).toBe('cancelled');
    expect(cancel.job).toMatchObject({ lifecycleStatus: 'cancelled', errorCode: 'CANCELLED' });
    const history = await db.aiJobTransition.findMany({ where: { jobId: created.id }, orderBy: { createdAt: 'asc' } });
    expect(history.at(-1)).toMatchObject({ fromStatus: 'running', toStatus: 'cancelled', actor: 'api:user-1' });
    expect(await events(created.id, 'ai.job.cancelled')).toBe(1);
  });
});

describe('execution.cancellable: false', () => {
  const isCancellable = cancellableIn(registry);

  it('refuses to cancel a running job with 409 JOB_NOT_CANCELLABLE, and the job runs to its end', async () => {
    const created = await h.create({ jobType: 'uncancellable_job', input: { prompt: 'do not stop me' } });
    let refusal: unknown;
    checkpoints.afterProviderAnswer = async (j) => {
      if (j.id === created.id) refusal = await requestCancel(db, j.id, { actor: 'api:user-1', isCancellable }).catch((e: unknown) => e);
    };
    try {
      await h.deliver();
    } finally {
      delete checkpoints.afterProviderAnswer;
    }
    expect(refusal).toMatchObject({ code: 'JOB_NOT_CANCELLABLE', state: 'running' });
    expect(await job(created.id)).toMatchObject({ lifecycleStatus: 'succeeded', cancelRequestedAt: null });
  });

  it('still cancels such a job while it is queued (nothing has run yet)', async () => {
    const created = await h.create({ jobType: 'uncancellable_job', input: { prompt: 'never started' } });
    expect((await requestCancel(db, created.id, { actor: 'api:user-1', isCancellable })).outcome).toBe('cancelled');
  });
});

describe('security.outputRedaction', () => {
  const secret = 'sk-abcdefghijklmnopqrstuvwxyz0123';

  it('redacts the output before the projector and the hash see it', async () => {
    const seen: unknown[] = [];
    const projectors = { get: (key: string) => ({ ...h.engine.projectors.get(key), project: async (_tx: unknown, j: AiJob, output: unknown) => {
      seen.push(output);
      return [{ artifactType: 'SyntheticAnswer', artifactId: j.id, ordinal: 0 }];
    } }) };
    const r = await startEngineHarness({ registry, engine: { projectors }, mock: { respond: () => ({ answer: `key is ${secret}`, echo: 'Bearer abcdefghijklmnopqrstuvwxyz' }) } });
    try {
      const redacted = await r.create({ jobType: 'redacted_output_job', input: { prompt: 'leak please' } });
      const plain = await r.create({ input: { prompt: 'leak please' } });
      expect((await r.runUntilTerminal(redacted.id)).lifecycleStatus).toBe('succeeded');
      expect((await r.runUntilTerminal(plain.id)).lifecycleStatus).toBe('succeeded');
      const expected = { answer: 'key is [REDACTED]', echo: 'Bearer [REDACTED]' };
      expect(seen).toContainEqual(expected);
      expect(seen).toContainEqual({ answer: `key is ${secret}`, echo: 'Bearer abcdefghijklmnopqrstuvwxyz' });
      expect((await job(redacted.id)).outputHash).toBe(hashCanonical(expected));
    } finally {
      await r.close();
    }
  });
});
