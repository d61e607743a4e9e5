/** Stream-log helpers for tests: a job with a real log, a publisher that records, and the whole log read back. */
import type mysql from 'mysql2/promise';
import { getPrisma, type AiJob } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { createJob } from '../../lib/jobs/create-job.ts';
import { createJob as createJobRow } from '../../lib/jobs/lifecycle-repository.ts';
import type { StreamPublisher, StreamPush, StreamEntry } from '../../lib/stream/protocol.ts';
import { readStreamPage } from '../../lib/stream/stream-log.ts';
import { rawDb } from './db.ts';

/** A publisher that keeps every push. */
export function recordingPublisher(): StreamPublisher & { pushes: StreamPush[]; entries(jobId?: string): StreamEntry[] } {
  const pushes: StreamPush[] = [];
  return {
    pushes,
    publish: (push) => { pushes.push(structuredClone(push)); },
    flush: async () => undefined,
    entries: (jobId) => pushes.filter((p) => jobId === undefined || p.jobId === jobId).flatMap((p) => p.entries),
  };
}

/** A queued synthetic job created the way the API creates one (its log starts with `queued` at `seq` 1). */
export async function createQueuedJob(userId = 'user-1'): Promise<AiJob> {
  const { job } = await createJob(
    { userId, jobType: 'synthetic_job', triggerType: 'user', targetType: 'user', targetId: userId, input: { prompt: 'stream me' } },
    { eagerDispatch: null },
  );
  return job;
}

/**
 * A queued synthetic job with its `queued` entry but no enqueue message: nothing but the test moves it (a running
 * local runtime's dispatcher and consumers never see it).
 */
export async function createJobWithoutMessage(userId: string): Promise<AiJob> {
  return getPrisma().$transaction((tx) => createJobRow(tx, {
    id: newId(), userId, jobType: 'synthetic_job', triggerType: 'user', targetType: 'user', targetId: userId, idempotencyKey: null,
    inputHash: '0'.repeat(64), queueName: 'interactive', priority: 50, maxAttempts: 3, timeoutMs: 30_000, inputSchemaVersion: 'v1',
    outputSchemaVersion: 'v1', promptKey: 'synthetic', promptVersion: 'v1', modelTier: 'fast', credentialMode: 'platform_key',
    credentialId: null, parentJobId: null,
  }, { actor: 'test', reason: 'created' }));
}

/** The job's whole log, page after page (pages of `pageSize`). */
export async function wholeLog(jobId: string, after = 0, pageSize = 200): Promise<StreamEntry[]> {
  const entries: StreamEntry[] = [];
  for (let position = after; ;) {
    const read = await readStreamPage(jobId, position, { limit: pageSize });
    if (!read) throw new Error(`job ${jobId} not found`);
    entries.push(...read.page.entries);
    position = read.page.entries.at(-1)?.seq ?? position;
    if (!read.page.hasMore) return entries;
  }
}

/**
 * Every `seq` of the job's log as ONE statement sees it (one snapshot of both tables): the test of commit order
 * — a snapshot of a log whose `seq` order is its commit order always holds 1..n, never a gap.
 */
export async function seqsInOneSnapshot(jobId: string): Promise<number[]> {
  const [rows] = await (await rawDb()).query<mysql.RowDataPacket[]>(
    `SELECT seq FROM AiJobTransition WHERE jobId = ? AND seq IS NOT NULL UNION ALL SELECT seq FROM AiJobStreamChunk WHERE jobId = ? ORDER BY seq`,
    [jobId, jobId],
  );
  return rows.map((r) => Number(r.seq));
}

/** Polls `probe` until it returns true (a condition, never a fixed sleep). */
export async function until(probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The text of `field` in `entries` of the newest segment, as a reader shows it. */
export function textOf(entries: readonly StreamEntry[], field: string): string {
  return entries.filter((e): e is Extract<StreamEntry, { type: 'text' }> => e.type === 'text' && e.field === field).map((e) => e.delta).join('');
}
