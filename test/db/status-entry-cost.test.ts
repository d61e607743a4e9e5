/**
 * What a NON-streaming job costs the database, read from the server's general log of a database user of its own
 * (test/helpers/general-log.ts) and classified by engine path as bench:peers does
 * (bench/peers/statement-paths.ts): write transactions, statements and round trips per job, and rows written per
 * job (every table counted after the workload). The workload: successes of three job types (row projector,
 * business tables, background queue), a retried job (release, new lease), a permanent failure and a cancel
 * while queued. Status entries of the stream log (docs/streaming.md, "Status entries") are written inside the
 * transactions that already exist and in no row of their own: these figures must not move when they are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { closePrisma, getPrisma } from '../../lib/db/client.ts';
import { closeSqlPool } from '../../lib/db/sql-pool.ts';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';
import { requestCancel } from '../../lib/jobs/cancellation.ts';
import { classifyLogRows, PATHS } from '../../bench/peers/statement-paths.ts';
import { rawDb } from '../helpers/db.ts';
import { loggedUser } from '../helpers/general-log.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { DEFAULT_LEASE_TIMING } from '../../lib/engine/lease-keeper.ts';
import { testRegistry } from '../helpers/test-job-types.ts';

const workerUrl = process.env.DATABASE_URL ?? '';
const holder = `status-entry-cost:${process.pid}:${Date.now()}`;
let session: Awaited<ReturnType<typeof loggedUser>>;
let h: EngineHarness;

beforeAll(async () => {
  await rawDb();
  session = await loggedUser(workerUrl, holder);
  await closePrisma();
  await closeSqlPool();
  process.env.DATABASE_URL = session.url;
  // Production's lease timing, not the harness's 3 s lease: on a loaded machine a short lease can expire mid-run
  // and add a lock and a ledger row that are not what this test counts.
  h = await startEngineHarness({ registry: testRegistry(), timing: DEFAULT_LEASE_TIMING });
});

afterAll(async () => {
  await h?.close();
  await closePrisma();
  await closeSqlPool();
  process.env.DATABASE_URL = workerUrl;
  await session?.release();
});

/** Rows of every application table (the migration history left out). */
async function rowsWritten(): Promise<Record<string, number>> {
  const db = await rawDb();
  const [tables] = await db.query<mysql.RowDataPacket[]>(
    "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations' ORDER BY table_name",
  );
  const counts: Record<string, number> = {};
  for (const { t } of tables) {
    const [[row]] = await db.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${String(t)}\``);
    if (Number(row?.n) > 0) counts[String(t)] = Number(row?.n);
  }
  return counts;
}

describe('the database cost of a non-streaming job', () => {
  it('is measured per job and path (write transactions, statements, round trips, rows written)', async () => {
    const jobs: { id: string }[] = [];
    for (let i = 0; i < 6; i += 1) jobs.push(await h.create({ input: { prompt: `ok ${i}` } }));
    for (let i = 0; i < 3; i += 1) jobs.push(await h.create({ jobType: 'feynman_evaluation', input: { concept: 'Gravity', explanation: `Mass attracts mass ${i}.` } }));
    const retried = await h.create({ jobType: 'quick_retry_job', input: { prompt: 'again', scenario: `fail_once:${holder}` } });
    const failed = await h.create({ jobType: 'single_attempt_job', input: { prompt: 'no', scenario: 'unauthorized' } });
    const cancelled = await h.create({ input: { prompt: 'never runs' } });
    await requestCancel(getPrisma(), cancelled.id, { actor: 'api:user-1' });
    jobs.push(retried, failed, cancelled);
    for (const job of jobs.slice(0, -1)) await h.runUntilTerminal(job.id);
    const finished = await getPrisma().aiJob.findMany({ select: { lifecycleStatus: true } });
    expect(finished.map((j) => j.lifecycleStatus).sort()).toEqual([...Array(10).fill('succeeded'), 'cancelled', 'failed'].sort());

    const report = classifyLogRows(await session.rows(), parseDatabaseUrl(workerUrl).database);
    const n = jobs.length;
    const per = (x: number) => Math.round((x / n) * 100) / 100;
    const total = PATHS.reduce((t, p) => ({
      writeTransactions: t.writeTransactions + report.counts[p].writeTransactions,
      statements: t.statements + report.counts[p].statements,
      roundTrips: t.roundTrips + report.counts[p].roundTrips,
    }), { writeTransactions: 0, statements: 0, roundTrips: 0 });
    const rows = await rowsWritten();
    const rowTotal = Object.values(rows).reduce((a, b) => a + b, 0);
    console.info([
      `per job (${n} jobs): write transactions ${per(total.writeTransactions)}, statements ${per(total.statements)}, round trips ${per(total.roundTrips)}, rows written ${per(rowTotal)}`,
      ...PATHS.filter((p) => report.counts[p].roundTrips > 0).map((p) => `  ${p.padEnd(9)} ${JSON.stringify(report.counts[p])}`),
      `  rows ${JSON.stringify(rows)}`,
    ].join('\n'));

    // As measured before status entries (the same workload, 12 jobs): no write transaction, no write statement and
    // no row more. The lock, the projection and the other edges take their entry's `seq` in their own UPDATE and
    // write it in their own audit row. The one addition is a read on the success claim's Prisma path (the 7 synthetic
    // jobs here; row projectors, as every production type, take the script path, whose guard reads it).
    const { create, dispatch, lock, usage, project } = report.counts;
    expect({ create, dispatch, lock, usage, project: { ...project, statements: project.statements - 7, roundTrips: project.roundTrips - 7 } }).toEqual({
      create: { roundTrips: 12, statements: 48, writeTransactions: 12, readUnits: 0 },
      dispatch: { roundTrips: 12, statements: 12, writeTransactions: 12, readUnits: 0 },
      lock: { roundTrips: 13, statements: 39, writeTransactions: 13, readUnits: 0 },
      // Shared provider capacity (docs/budgets.md) settles each call's hold with its ledger row: 2 statements more
      // with a failed call's usage row (the hold, model and window in one UPDATE, then the hold's DELETE); in the
      // projections, 6 more over the 12 jobs. No transaction and no round trip more. The 3 Feynman evaluations'
      // last batches of stream chunks ride in their projections (docs/streaming.md): 3 statements more there, and
      // 3 append transactions fewer on the stream's path; knowing their claim's `seq`, those 3 projections need no
      // guard statement (the audit row guards): 3 statements fewer.
      usage: { roundTrips: 9, statements: 9 + 2 * 9, writeTransactions: 9, readUnits: 0 },
      project: { roundTrips: 43, statements: 57 + 6 + 3 - 3, writeTransactions: 12, readUnits: 0 },
    });
    // The Feynman evaluations stream their feedback (docs/streaming.md): their chunks are the streaming cost, apart;
    // so are the shared capacity's rows of the one model (a limit and its minute windows, updated in place).
    const { AiJobStreamChunk: chunks, ProviderLimit: _limits, ProviderWindow: _windows, ProviderUserWindow: _userWindows, ...nonStreaming } = rows;
    expect(nonStreaming).toEqual({
      AiJob: 12, AiJobArtifact: 10, AiJobSnapshot: 12, AiJobTransition: 37, AiUsageLog: 12, FeynmanEvaluation: 3, OutboxEvent: 24,
    });
    const chunkJobs = await getPrisma().aiJobStreamChunk.findMany({ distinct: ['jobId'], select: { job: { select: { jobType: true } } } });
    expect(chunks === undefined || chunkJobs.every((c) => c.job.jobType === 'feynman_evaluation')).toBe(true);
    // Every transition row is a status entry: with a streaming job's chunks, `seq` 1, 2, … per job without a gap,
    // the transitions' in the order they happened.
    const transitions = await getPrisma().aiJobTransition.findMany({ orderBy: { id: 'asc' }, select: { jobId: true, seq: true } });
    const chunkSeqs = await getPrisma().aiJobStreamChunk.findMany({ select: { jobId: true, seq: true } });
    for (const [jobId, list] of Map.groupBy(transitions, (t) => t.jobId)) {
      const seqs = list.map((t) => Number(t.seq));
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      const all = [...seqs, ...chunkSeqs.filter((c) => c.jobId === jobId).map((c) => c.seq)].sort((a, b) => a - b);
      expect(all).toEqual(all.map((_, i) => i + 1));
    }
  });
});
