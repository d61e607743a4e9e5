/**
 * Classifies what our runtime sent (general-log rows of its own connections, ./statement-log.ts) by the path of
 * the engine that sent it, and counts per path: round trips (log rows), statements (a multi-statement text
 * split into its statements; START/BEGIN/COMMIT/ROLLBACK not counted), write transactions (committed units with an INSERT/UPDATE/DELETE) and read-only
 * units.
 *
 * A unit is a transaction (START TRANSACTION/BEGIN … COMMIT/ROLLBACK, across rows of one connection) or one
 * statement outside a transaction (autocommit). A unit's path is the first rule of {@link PATH_RULES} whose
 * pattern matches any of its statements; the patterns are the SQL the engine sends (lib/jobs, lib/outbox,
 * lib/engine, lib/rollups, and Prisma's rendering of the repositories' calls), with database qualifiers and
 * backquotes removed. Session statements outside a transaction (`SET …`) go with the unit sent in the same
 * round trip, else to `other`.
 */
import { splitStatements, type GeneralLogRow } from '../../test/helpers/general-log.ts';

export const PATHS = ['create', 'dispatch', 'lock', 'run', 'progress', 'heartbeat', 'capacity', 'usage', 'project', 'events', 'other'] as const;
export type EnginePath = (typeof PATHS)[number];

/** What each path covers, for the printed table. */
export const PATH_NOTES: Record<EnginePath, string> = {
  create: 'create tx (limits guard, job on the user key if stored, transition, snapshot, outbox); at a limit, the preflight read',
  dispatch: 'eager dispatch: claim (when not born claimed), job read, settle published',
  lock: 'lock tx (running, lease, transition, job and snapshot read back)',
  run: 'reads around the provider call (job, snapshot, fence checks)',
  progress: 'progress updates',
  heartbeat: 'lease extension, cancel polls',
  capacity: 'reservation tx before the provider call (shared limits and caps: docs/budgets.md); the capacity sweep',
  usage: 'AiUsageLog insert (with the hold settlement of a failed call)',
  project: 'projection tx (business rows, artifacts, job succeeded, transition, terminal-event outbox row)',
  events: 'scheduled outbox cycles (terminal events; missed eager dispatches), lock release',
  other: 'session SETs, reaper, maintenance/rollups, anything unmatched',
};

/** Ordered: the first match wins. */
const PATH_RULES: readonly { path: EnginePath; pattern: RegExp }[] = [
  { path: 'other', pattern: /\b(AiUsageDaily|AiUsageUserDaily|AiJobFinishedHourly|AiJobFinishedTotal|AiRollupWatermark)\b/ },
  { path: 'create', pattern: /INSERT INTO AiJob \(|\bUserModelCredential\b|SELECT COUNT\(\*\) AS _count\$_all FROM \(SELECT AiJob\.id FROM AiJob WHERE \(AiJob\.userId|AiJob\.idempotencyKey = |^SELECT \(SELECT COUNT\(\*\) FROM AiJob WHERE userId = / },
  { path: 'project', pattern: /\b(FeynmanEvaluation|QuizQuestion|Flashcard|AiJobArtifact)\b|\bfinishedAt = / },
  { path: 'lock', pattern: /leaseVersion = leaseVersion \+ 1/ },
  { path: 'usage', pattern: /\bAiUsageLog\b/ },
  { path: 'capacity', pattern: /\b(CapacityHold|ProviderLimit|ProviderWindow|CapacityWait|SpendCounter)\b/ },
  { path: 'events', pattern: /OutboxEvent[\s\S]*(ORDER BY availableAt|status = 'processing' AND availableAt <=|lockedBy = NULL)/ },
  { path: 'dispatch', pattern: /\bOutboxEvent\b|^SELECT id, jobType, createdAt FROM AiJob WHERE id IN/ },
  { path: 'heartbeat', pattern: /^UPDATE AiJob SET lockUntil = |^SELECT AiJob\.id, AiJob\.cancelRequestedAt FROM|^SELECT AiJob\.cancelRequestedAt/ },
  { path: 'progress', pattern: /^UPDATE AiJob SET progress = / },
  { path: 'other', pattern: /lockUntil < |lifecycleStatus = 'queued' AND .*updatedAt < / },
  { path: 'run', pattern: /\bAiJobSnapshot\b|\bFROM AiJob\b/ },
];

const TX_START = /^(START TRANSACTION|BEGIN)\b/i;
const TX_END = /^(COMMIT|ROLLBACK)\b/i;
const SESSION = /^SET\b(?! TRANSACTION)/i;
const WRITE = /^(INSERT|UPDATE|DELETE|REPLACE)\b/i;

/** Backquotes and `db.` qualifiers removed, whitespace collapsed: the form {@link PATH_RULES} match. */
function normalise(sql: string, database: string): string {
  return sql.replaceAll(`\`${database}\`.`, '').replaceAll('`', '').replace(/\s+/g, ' ').trim();
}

interface Unit {
  statements: string[];
  rows: number[];
  inTransaction: boolean;
  ended: 'commit' | 'rollback' | 'open' | 'autocommit';
}

export interface PathCounts {
  roundTrips: number;
  statements: number;
  writeTransactions: number;
  readUnits: number;
}

export interface PathReport {
  counts: Record<EnginePath, PathCounts>;
  /** Each classified unit's path and its first statements (for BENCH_SQL_DUMP). */
  units: { path: EnginePath; sql: string }[];
}

export function classifyLogRows(rows: readonly GeneralLogRow[], database: string): PathReport {
  const units: Unit[] = [];
  const open = new Map<number, Unit>();
  const rowUnits: Unit[][] = rows.map(() => []);
  rows.forEach((row, r) => {
    if (row.command !== 'Query' && row.command !== 'Execute') return;
    const orphans: string[] = [];
    for (const raw of splitStatements(row.argument)) {
      const sql = normalise(raw, database);
      let unit = open.get(row.threadId);
      if (!unit && TX_START.test(sql)) {
        unit = { statements: [], rows: [], inTransaction: true, ended: 'open' };
        open.set(row.threadId, unit);
        units.push(unit);
      } else if (!unit && (SESSION.test(sql) || /^SET TRANSACTION/i.test(sql))) {
        orphans.push(sql);
        continue;
      } else if (!unit) {
        unit = { statements: [], rows: [], inTransaction: false, ended: 'autocommit' };
        units.push(unit);
      }
      unit.statements.push(sql);
      if (!unit.rows.includes(r)) unit.rows.push(r);
      if (!rowUnits[r]!.includes(unit)) rowUnits[r]!.push(unit);
      if (unit.inTransaction && TX_END.test(sql)) {
        unit.ended = /^COMMIT/i.test(sql) ? 'commit' : 'rollback';
        open.delete(row.threadId);
      }
    }
    const host = rowUnits[r]![0];
    if (orphans.length > 0) {
      if (host) host.statements.push(...orphans);
      else {
        const unit: Unit = { statements: orphans, rows: [r], inTransaction: false, ended: 'autocommit' };
        units.push(unit);
        rowUnits[r]!.push(unit);
      }
    }
  });
  const pathOf = new Map<Unit, EnginePath>(units.map((u) => [u, classify(u)]));
  const counts = Object.fromEntries(PATHS.map((p) => [p, { roundTrips: 0, statements: 0, writeTransactions: 0, readUnits: 0 }])) as Record<EnginePath, PathCounts>;
  for (const unit of units) {
    const c = counts[pathOf.get(unit)!];
    c.statements += unit.statements.filter((s) => !TX_START.test(s) && !TX_END.test(s)).length;
    const committed = unit.ended === 'commit' || unit.ended === 'autocommit';
    const writes = unit.statements.some((s) => WRITE.test(s));
    if (committed && writes) c.writeTransactions += 1;
    else if (committed && !unit.statements.every((s) => SESSION.test(s))) c.readUnits += 1;
  }
  for (const hosted of rowUnits) if (hosted[0]) counts[pathOf.get(hosted[0])!].roundTrips += 1;
  return { counts, units: units.map((u) => ({ path: pathOf.get(u)!, sql: u.statements.join('; ').slice(0, 300) })) };
}

/** The path of one transaction's (or one autocommit statement's) statements, as the log shows them. */
export function pathOfStatements(statements: readonly string[], database: string): EnginePath {
  return classify({ statements: statements.map((s) => normalise(s, database)), rows: [], inTransaction: true, ended: 'commit' });
}

function classify(unit: Unit): EnginePath {
  for (const rule of PATH_RULES) if (unit.statements.some((s) => rule.pattern.test(s))) return rule.path;
  return 'other';
}
