/**
 * Everything the application sends the database stays multiplexable through RDS Proxy: a representative
 * workload runs over HTTP against the local runtime (create with eager dispatch, scheduled dispatch, consume
 * with a retry and with success, cancel, the reaper, admin reads, the credential store, stream reads and a long-poll) as a database user of
 * its own, and the server's general log of that user's connections is checked against the rules in
 * docs/deploy.md ("RDS Proxy: what the application sends") — see test/helpers/pinning-rules.ts.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { closePrisma } from '../../lib/db/client.ts';
import { closeSqlPool } from '../../lib/db/sql-pool.ts';
import { rawDb } from '../helpers/db.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';
import { insertJob, minutesAgo } from '../helpers/factories.ts';
import { loggedUser, type GeneralLogRow } from '../helpers/general-log.ts';
import { checkPinning, migratorThreads } from '../helpers/pinning-rules.ts';

const workerUrl = process.env.DATABASE_URL ?? '';
const holder = `proxy-safe-sql:${process.pid}:${Date.now()}`;
let session: Awaited<ReturnType<typeof loggedUser>>;
let e: E2e;
/** The workload's job that succeeded at its first call, and the log rows the first test read. */
let okJobId = '';
let loggedRows: GeneralLogRow[] = [];

beforeAll(async () => {
  await rawDb(); // the per-test truncation keeps its own root connection, outside the logged user
  session = await loggedUser(workerUrl, holder);
  await closePrisma();
  await closeSqlPool();
  process.env.DATABASE_URL = session.url;
  e = await startE2e();
});

afterAll(async () => {
  await e?.stop();
  process.env.DATABASE_URL = workerUrl;
  await session?.release();
});

/** Polls `probe` until it returns true (a condition, never a fixed sleep). */
async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function rowCount(sql: string, values: unknown[]): Promise<number> {
  const [rows] = await (await rawDb()).query<mysql.RowDataPacket[]>(sql, values);
  return Number(rows[0]?.n ?? 0);
}

/** The workload; returns how many jobs it created. */
async function runWorkload(): Promise<number> {
  const [alice, admin] = await Promise.all([e.token('alice'), e.token('root', { admin: true })]);
  const feynman = (explanation: string) => ({ concept: 'Photosynthesis', explanation });

  // Credential store: put, read, revoke.
  const put = await e.api('PUT', '/api/ai/credentials/deepseek', { token: alice, body: { apiKey: 'sk-pinningtest0123456789abcdefXYZ9' } });
  expect(put.status).toBe(200);
  expect((await e.api('GET', '/api/ai/credentials/deepseek', { token: alice })).status).toBe(200);
  expect((await e.api('DELETE', '/api/ai/credentials/deepseek', { token: alice })).status).toBe(204);

  // Create (eager dispatch) and consume: one success, one that fails once and is retried, one cancelled.
  const ok = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: feynman('Plants store light.') });
  const retried = await e.api('POST', '/api/ai/quiz-generations', {
    token: alice, body: { sourceText: `ATP [scenario:fail_once:${holder}]`, count: 2, difficulty: 'easy' },
  });
  const hung = await e.api('POST', '/api/ai/feynman-evaluations', { token: alice, body: feynman('Slowly [scenario:hang]') });
  for (const res of [ok, retried, hung]) expect(res.status).toBe(202);
  okJobId = String(ok.body.jobId);
  await until(async () => (await e.api('GET', `/api/ai/jobs/${hung.body.jobId}`, { token: alice })).body.lifecycleStatus === 'running', 'the hung job to run');
  // The stream log of a running job: a page, then a long-poll that waits (reads of the log's head) and ends empty.
  const log = await e.api('GET', `/api/ai/jobs/${hung.body.jobId}/stream`, { token: alice });
  expect(log.status).toBe(200);
  expect((await e.api('GET', `/api/ai/jobs/${hung.body.jobId}/stream?after=${log.body.lastSeq}&wait=1`, { token: alice })).body.entries).toEqual([]);
  expect((await e.api('POST', `/api/ai/jobs/${hung.body.jobId}/cancel`, { token: alice })).status).toBe(202);
  expect(await e.waitForTerminal(ok.body.jobId, alice)).toMatchObject({ lifecycleStatus: 'succeeded' });
  expect(await e.waitForTerminal(retried.body.jobId, alice)).toMatchObject({ lifecycleStatus: 'succeeded' });
  expect(await e.waitForTerminal(hung.body.jobId, alice)).toMatchObject({ lifecycleStatus: 'cancelled' });
  // The retried job really made two provider calls: the failed one and the one that succeeded.
  expect(await rowCount('SELECT COUNT(*) AS n FROM AiUsageLog WHERE jobId = ?', [retried.body.jobId])).toBeGreaterThanOrEqual(2);

  // The reaper fails a job whose last lease expired; its terminal event goes out by scheduled dispatch.
  const stale = await insertJob({
    lifecycleStatus: 'running', attemptCount: 1, maxAttempts: 1, lockedBy: 'vanished-worker', lockUntil: minutesAgo(5),
  });
  await until(async () => (await rowCount(
    "SELECT COUNT(*) AS n FROM OutboxEvent WHERE aggregateId = ? AND status = 'published'", [stale.id],
  )) > 0, 'the reaped job\'s event to be published by the scheduled dispatcher');

  // A create whose input is long: its statement is over 16 KB, so the pool closes that connection after it.
  const bob = await e.token('bob');
  const long = await e.api('POST', '/api/ai/quiz-generations', {
    token: bob, body: { sourceText: `Cells divide. ${'Mitosis has phases. '.repeat(950)}`, count: 2, difficulty: 'easy' },
  });
  expect(long.status).toBe(202);
  expect(await e.waitForTerminal(long.body.jobId, bob)).toMatchObject({ lifecycleStatus: 'succeeded' });

  // Admin reads.
  expect((await e.api('GET', `/admin-api/ai/jobs/${retried.body.jobId}`, { token: admin })).status).toBe(200);
  expect((await e.api('GET', `/admin-api/ai/jobs/${retried.body.jobId}/stream`, { token: admin })).body.terminal).toBe(true);
  expect((await e.api('GET', '/admin-api/ai/jobs?limit=5', { token: admin })).status).toBe(200);
  expect((await e.api('GET', '/admin-api/ai/stats', { token: admin })).status).toBe(200);
  return 5;
}

describe('what the application sends through RDS Proxy', () => {
  it('sends no prepared statements, user variables, unlisted SETs or named locks, and no statement over 16 KB on a connection it keeps', async () => {
    const jobs = await runWorkload();
    const rows = await session.rows();
    loggedRows = rows;
    expect(rows.filter((r) => r.command === 'Connect').length).toBeGreaterThan(0);
    // The long create's transaction is over 16 KB (so the rule below is not checked vacuously).
    expect(rows.filter((r) => r.command === 'Query' && Buffer.byteLength(r.argument) > 16 * 1024 && r.argument.includes('Mitosis has phases')).length).toBeGreaterThan(0);
    const { violations, counts, setKinds } = checkPinning(rows, migratorThreads(rows));
    console.info(`general log, per job (${jobs} jobs): ${JSON.stringify(Object.fromEntries(
      Object.entries(counts).map(([k, v]) => [k, Math.round((v / jobs) * 10) / 10]),
    ))}; totals ${JSON.stringify(counts)}; SETs ${JSON.stringify(setKinds)}`);
    const kinds = new Map<string, number>();
    for (const v of violations) kinds.set(v.split(': [')[0] ?? v, (kinds.get(v.split(': [')[0] ?? v) ?? 0) + 1);
    if (kinds.size > 0) console.info(`violations by kind: ${JSON.stringify(Object.fromEntries(kinds))}`);
    expect(violations.slice(0, 20)).toEqual([]);
  });

  it('bills the call that answered inside the projection\'s transaction, after the success claim', () => {
    const ledger = loggedRows.filter((r) => r.command === 'Query' && r.argument.includes(okJobId) && r.argument.includes('INSERT INTO `AiUsageLog`'));
    expect(ledger).toHaveLength(1);
    const text = ledger[0]!.argument;
    expect(text).toContain("lifecycleStatus = 'succeeded'");
    expect(text.indexOf('START TRANSACTION')).toBeLessThan(text.indexOf('INSERT INTO `AiUsageLog`'));
    expect(text.indexOf('INSERT INTO `AiUsageLog`')).toBeLessThan(text.indexOf('COMMIT'));
  });

  it('creates each job within the limits in one round trip: the limits\' guard, then the job and its rows', () => {
    const queries = loggedRows.filter((r) => r.command === 'Query');
    const counting = queries.filter((r) => r.argument.includes("SELECT COUNT(*) FROM AiJob WHERE userId = 'alice'"));
    expect(counting).toHaveLength(3); // the workload's three creates, and no read of the limits of their own
    for (const { argument: text } of counting) {
      const at = (part: string) => text.indexOf(part);
      expect(at('START TRANSACTION')).toBe(0);
      expect(at('START TRANSACTION')).toBeLessThan(at('AS withinLimits'));
      expect(at('AS withinLimits')).toBeLessThan(at('INSERT INTO `AiJob`'));
      expect(at('INSERT INTO `AiJob`')).toBeLessThan(at('INSERT INTO `OutboxEvent`'));
      expect(at('INSERT INTO `OutboxEvent`')).toBeLessThan(at('COMMIT'));
    }
    expect(queries.filter((r) => r.argument.includes('AS replayId') || r.argument.includes(') AS active'))).toEqual([]);
  });

  it('has no Prisma transaction that asks for an isolation level (the adapter sends SET TRANSACTION and BEGIN apart)', async () => {
    const lib = path.resolve(import.meta.dirname, '../../lib');
    const files = (await readdir(lib, { recursive: true }))
      .filter((f) => f.endsWith('.ts') && !f.startsWith(`db${path.sep}generated`));
    const offenders: string[] = [];
    for (const f of files) {
      const code = (await readFile(path.join(lib, f), 'utf8')).split('\n').filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line));
      if (code.some((line) => /\bisolationLevel\s*:/.test(line))) offenders.push(f);
    }
    expect(offenders).toEqual([]);
  });
});
