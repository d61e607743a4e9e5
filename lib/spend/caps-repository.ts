/**
 * Spending caps for admins and users (the later API, CLI and console read and write through here): each cap's
 * use in its current UTC period, and admin changes to caps. Writes are validated first (InvalidLimitError: the
 * API answers 400). A cap lowered below the spend already counted stops new admissions at once (the reservation
 * and the create guard read it every time) and never touches calls already running: their holds settle as usual.
 */
import { getSqlPool, type SqlPool } from '../db/sql-pool.ts';
import type { SqlValue } from '../db/sql.ts';
import { DATABASE_CLOCK, withClock, type DbClock } from '../capacity/db-clock.ts';
import { InvalidLimitError } from '../capacity/errors.ts';
import { DEFAULT_SUBJECT, periodEnd, SPEND_SCOPES, validCapUsd, type SpendCapDefaults, type SpendScope } from './caps.ts';

/** One cap and its use in the current period. */
export interface SpendUse {
  scope: SpendScope;
  subject: string;
  /** First day of the period (UTC), `YYYY-MM-DD`. */
  periodStart: string;
  /** When the period ends and the cap starts again from zero (UTC). */
  periodEnd: Date;
  /** The cap that applies (8 decimals), or null when none does. */
  capUsd: string | null;
  /** Where it comes from: an admin's cap for this subject, an admin's default for the scope, the stage's default. */
  capSource: 'subject' | 'default' | 'config' | null;
  settledUsd: string;
  reservedUsd: string;
}

export interface SpendRepositoryOptions {
  defaults: SpendCapDefaults;
  pool?: SqlPool;
  clock?: DbClock;
}

const PERIOD: Readonly<Record<SpendScope, string>> = {
  job_type_day: 'DATE({now})', platform_day: 'DATE({now})', user_day: 'DATE({now})', user_month: "CAST(DATE_FORMAT({now}, '%Y-%m-01') AS DATE)",
};

/** The caller's own caps (user day and month): what the user API shows. */
export function readUserSpend(userId: string, o: SpendRepositoryOptions): Promise<SpendUse[]> {
  return readSpendUse([{ scope: 'user_day', subject: userId }, { scope: 'user_month', subject: userId }], o);
}

/** The platform's day and every job type's day: what the admin overview shows. */
export function readPlatformSpend(jobTypes: readonly string[], o: SpendRepositoryOptions): Promise<SpendUse[]> {
  return readSpendUse([{ scope: 'platform_day', subject: DEFAULT_SUBJECT }, ...jobTypes.map((t) => ({ scope: 'job_type_day' as const, subject: t }))], o);
}

/** The use of each (scope, subject) in its current period, in one query. */
export async function readSpendUse(items: readonly { scope: SpendScope; subject: string }[], o: SpendRepositoryOptions): Promise<SpendUse[]> {
  if (items.length === 0) return [];
  const values: SqlValue[] = [];
  const selects = items.map(({ scope, subject }) => {
    values.push(subject, subject, o.defaults[scope], scope, subject);
    return `SELECT '${scope}' AS scope, ? AS subject, ${PERIOD[scope]} AS periodStart, {now} AS now,
              (SELECT capUsd FROM \`SpendCap\` WHERE scope = '${scope}' AND subject = ?) AS own,
              (SELECT capUsd FROM \`SpendCap\` WHERE scope = '${scope}' AND subject = '${DEFAULT_SUBJECT}') AS dflt,
              CAST(? AS DECIMAL(14, 8)) AS configured,
              (SELECT CONCAT(settledUsd, '|', reservedUsd) FROM \`SpendCounter\` WHERE scope = ? AND subject = ? AND periodStart = ${PERIOD[scope]}) AS used`;
  });
  const read = withClock(selects.join(' UNION ALL '), o.clock ?? DATABASE_CLOCK, values);
  const rows = (await (o.pool ?? getSqlPool()).query(read.sql, read.values)) as Record<string, unknown>[];
  return rows.map((r) => {
    const scope = r.scope as SpendScope;
    const [settled = '0.00000000', reserved = '0.00000000'] = r.used == null ? [] : String(r.used).split('|');
    const cap = r.own ?? r.dflt ?? r.configured;
    return {
      scope, subject: String(r.subject), periodStart: dateKey(r.periodStart), periodEnd: periodEnd(scope, new Date(r.now as Date)),
      capUsd: cap == null ? null : validCapUsd('capUsd', String(cap)),
      capSource: r.own != null ? 'subject' : r.dflt != null ? 'default' : r.configured != null ? 'config' : null,
      settledUsd: fixed8(settled), reservedUsd: fixed8(reserved),
    };
  });
}

/**
 * Sets a cap: for one subject (a user id, a job type) or the scope's default (`*`). The platform scope has only
 * `*`. @throws InvalidLimitError for an unknown scope or job type, a malformed subject, or a bad amount
 */
export async function setSpendCap(
  scope: unknown, subject: unknown, capUsd: unknown, actor: string, o: { jobTypes: readonly string[]; pool?: SqlPool },
): Promise<{ scope: SpendScope; subject: string; capUsd: string }> {
  const s = validScope(scope);
  const subj = validSubject(s, subject, o.jobTypes);
  const cap = validCapUsd('capUsd', capUsd);
  await (o.pool ?? getSqlPool()).query(
    `INSERT INTO \`SpendCap\` (scope, subject, capUsd, source, updatedBy, updatedAt) VALUES (?, ?, ?, 'admin', ?, UTC_TIMESTAMP(3))
     ON DUPLICATE KEY UPDATE capUsd = ?, source = 'admin', updatedBy = ?, updatedAt = UTC_TIMESTAMP(3)`,
    [s, subj, cap, actor.slice(0, 128), cap, actor.slice(0, 128)],
  );
  return { scope: s, subject: subj, capUsd: cap };
}

/** Removes an admin's cap: the subject falls back to the scope's default, a default to the stage's configuration. */
export async function removeSpendCap(scope: unknown, subject: unknown, o: { jobTypes: readonly string[]; pool?: SqlPool }): Promise<boolean> {
  const s = validScope(scope);
  const result = await (o.pool ?? getSqlPool()).query('DELETE FROM `SpendCap` WHERE scope = ? AND subject = ?', [s, validSubject(s, subject, o.jobTypes)]);
  return Number((result as { affectedRows?: number }).affectedRows ?? 0) > 0;
}

/** @throws InvalidLimitError */
export function validScope(scope: unknown): SpendScope {
  if (typeof scope !== 'string' || !(SPEND_SCOPES as readonly string[]).includes(scope)) {
    throw new InvalidLimitError('scope', `must be one of ${SPEND_SCOPES.join(', ')}`);
  }
  return scope as SpendScope;
}

function validSubject(scope: SpendScope, subject: unknown, jobTypes: readonly string[]): string {
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > 64) throw new InvalidLimitError('subject', 'must be 1 to 64 characters');
  if (subject === DEFAULT_SUBJECT) return subject;
  if (scope === 'platform_day') throw new InvalidLimitError('subject', `of platform_day must be "${DEFAULT_SUBJECT}"`);
  if (scope === 'job_type_day' && !jobTypes.includes(subject)) throw new InvalidLimitError('subject', `is not a registered job type: ${subject}`);
  return subject;
}

function dateKey(value: unknown): string {
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
}

/** A DECIMAL(14,8) as the driver returns it, with its 8 places. */
function fixed8(value: string): string {
  return /^\d+\.\d{8}$/.test(value) ? value : Number(value).toFixed(8);
}
