/**
 * Ours only — statements per job by path: a window of jobs through one way in, with MariaDB's general log on
 * (./statement-log.ts: table output, shared under the tests' holder protocol) and a runtime host of its own
 * connected as a database user of its own; each transaction or autocommit statement is classified by the SQL
 * it sends (./statement-paths.ts). The window closes once the jobs are done and their terminal events are
 * published (the scheduled dispatcher, every 2 s). The log slows the server, so no timing is taken here.
 */
import { writeFile } from 'node:fs/promises';
import type mysql from 'mysql2/promise';
import { startOursHost, waitForOursIdle, waitForOutboxSettled } from './ours.ts';
import { submitOverHttp } from './http-clients.ts';
import { withStatementLog } from './statement-log.ts';
import { classifyLogRows, PATH_NOTES, PATHS, type PathCounts, type PathReport } from './statement-paths.ts';
import type { LoadPlan } from './load.ts';
import type { UserGroup } from './ours-host.ts';
import type { OursJob } from './workload.ts';
import type { EmulatorEndpoints } from '../emulators.ts';

export interface StatementWindow {
  report: PathReport;
  /** False when someone switched the log off during the window (the counts are then short). */
  complete: boolean;
  jobs: number;
}

/** Where and what a window runs: the server, our database, the emulators, the load and its users. */
export interface WindowPlan {
  admin: mysql.Connection;
  server: { host: string; port: number };
  database: string;
  /** No SQS endpoint: the window's runtime starts fauxqs in its own process, so no other runtime takes its messages. */
  endpoints: Pick<EmulatorEndpoints, 'mockAiUrl' | 'awsEndpoint'>;
  way: 'http' | 'inproc';
  plan: LoadPlan;
  runId: string;
  users: UserGroup;
  jobFor(i: number): OursJob;
  /** BENCH_SQL_DUMP: write each classified unit's path and SQL to `<file>.<runId>`. */
  dumpFile?: string | undefined;
}

export async function statementWindow(w: WindowPlan): Promise<StatementWindow> {
  const window = await withStatementLog(w.admin, w.database, (user, password) => `mysql://${user}:${password}@${w.server.host}:${w.server.port}/${w.database}`,
    async (loggedUrl, marks) => {
      const { mockAiUrl, awsEndpoint } = w.endpoints;
      const logged = await startOursHost(loggedUrl, { mockAiUrl, ...(awsEndpoint ? { awsEndpoint } : {}) });
      try {
        const tokens = w.way === 'http' ? await logged.request<string[]>({ cmd: 'tokens', users: w.users }) : [];
        await marks.start();
        if (w.way === 'http') await submitOverHttp(logged.url, tokens, w.plan, w.runId, w.jobFor);
        else await logged.request({ cmd: 'inproc', plan: w.plan, runId: w.runId, users: w.users });
        await waitForOursIdle(w.admin, w.database);
        await waitForOutboxSettled(w.admin, w.database);
        await marks.end();
      } finally {
        await logged.stop();
      }
    });
  const classified = classifyLogRows(window.rows, w.database);
  if (w.dumpFile) await writeFile(`${w.dumpFile}.${w.runId}`, classified.units.map((u) => `${u.path}\t${u.sql}`).join('\n'));
  return { report: classified, complete: window.complete, jobs: w.plan.jobs };
}

/** The window's totals over every path. */
export function pathTotals(r: StatementWindow): PathCounts {
  const total: PathCounts = { writeTransactions: 0, readUnits: 0, statements: 0, roundTrips: 0 };
  for (const path of PATHS) for (const k of Object.keys(total) as (keyof PathCounts)[]) total[k] += r.report.counts[path][k];
  return total;
}

/** The table: per path, write transactions, read units, statements and round trips per job. */
export function formatPaths(title: string, r: StatementWindow): string[] {
  const per = (n: number) => (n / r.jobs).toFixed(2).padStart(8);
  const lines = [`${title} statements per job by path (general log, ${r.jobs} jobs${r.complete ? '' : ', INCOMPLETE: the log was switched off during the window'}):`,
    `  ${'path'.padEnd(10)} ${'write_tx'.padStart(8)} ${'read_tx'.padStart(8)} ${'stmts'.padStart(8)} ${'trips'.padStart(8)}  what`];
  for (const path of PATHS) {
    const c = r.report.counts[path];
    lines.push(`  ${path.padEnd(10)} ${per(c.writeTransactions)} ${per(c.readUnits)} ${per(c.statements)} ${per(c.roundTrips)}  ${PATH_NOTES[path]}`);
  }
  const total = pathTotals(r);
  lines.push(`  ${'total'.padEnd(10)} ${per(total.writeTransactions)} ${per(total.readUnits)} ${per(total.statements)} ${per(total.roundTrips)}`);
  return lines;
}
