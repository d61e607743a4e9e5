/**
 * Provider limits for admins (the later admin API, CLI and console read and write through here): the effective
 * limits of every model with their use right now (the minute window, calls in flight, a cooldown and until
 * when), and changes at run time. Every write is validated first (InvalidLimitError, UnknownModelError: the API
 * answers 400) and is one statement.
 *
 * Precedence (docs/budgets.md): an admin's values (`source = 'admin'`) stand until an admin resets them; a row
 * with `source = 'config'` follows the stage's configuration, which every reservation writes into it.
 */
import { getSqlPool, type SqlPool } from '../db/sql-pool.ts';
import type { ModelRoute } from '../ai/types.ts';
import { DATABASE_CLOCK, withClock, type DbClock } from './db-clock.ts';
import { InvalidLimitError, UnknownModelError } from './errors.ts';
import { ADMIN_LIMIT_FIELDS, validLimit, type AdminLimitField, type ProviderLimitsConfig } from './limits-config.ts';
import { admittedSql, rateFactorSql } from './reserve-statements.ts';

/** One model's limits and use, as an admin sees them. */
export interface ModelCapacityView {
  provider: string;
  model: string;
  rpm: number;
  tpm: number;
  maxInFlight: number;
  maxOutputTokens: number;
  /** `config` (follows the stage's configuration) or `admin` (set at run time by `updatedBy`). */
  source: 'config' | 'admin';
  updatedBy: string | null;
  updatedAt: Date | null;
  inFlight: number;
  /** When the model's cooldown ends; null when it is not cooling down. */
  cooldownUntil: Date | null;
  /** The share of the limits admitted now (per mille; below 1000 while recovering from a cooldown). */
  rateFactor: number;
  /** The current minute window (the database's UTC minute): requests and tokens taken, of the admitted limits. */
  window: { start: Date; requests: number; tokens: number; rpm: number; tpm: number };
}

export interface LimitsRepositoryOptions {
  config: ProviderLimitsConfig;
  /** The models routes may call (the router's): only these may be read or set. */
  routes: readonly ModelRoute[];
  pool?: SqlPool;
  clock?: DbClock;
}

const MINUTE = "CAST(DATE_FORMAT({now}, '%Y-%m-%d %H:%i:00') AS DATETIME(3))";

/** Every routed model's limits and use now. */
export async function readModelCapacity(o: LimitsRepositoryOptions): Promise<ModelCapacityView[]> {
  const pool = o.pool ?? getSqlPool();
  const read = withClock(
    `SELECT l.*, {now} AS now, ${rateFactorSql('l', '{now}')} AS factor, ${MINUTE} AS windowStart,
       ${admittedSql('l', 'rpm', '{now}')} AS admittedRpm, ${admittedSql('l', 'tpm', '{now}')} AS admittedTpm,
       COALESCE(w.requests, 0) AS windowRequests, COALESCE(w.tokens, 0) AS windowTokens
     FROM \`ProviderLimit\` l LEFT JOIN \`ProviderWindow\` w ON w.provider = l.provider AND w.model = l.model AND w.windowStart = ${MINUTE}`,
    o.clock ?? DATABASE_CLOCK,
  );
  const rows = (await pool.query(read.sql, read.values)) as Record<string, unknown>[];
  const byKey = new Map(rows.map((r) => [`${String(r.provider)}/${String(r.model)}`, r]));
  const nowRead = withClock(`SELECT {now} AS now, ${MINUTE} AS windowStart`, o.clock ?? DATABASE_CLOCK);
  const [now] = (await pool.query(nowRead.sql, nowRead.values)) as { now: Date; windowStart: Date }[];
  return o.routes.map((route) => {
    const configured = o.config.limitsFor(route)!;
    const row = byKey.get(`${route.provider}/${route.model}`);
    const cooldown = row?.cooldownUntil ? new Date(row.cooldownUntil as Date) : null;
    const limits = row ? { rpm: Number(row.rpm), tpm: Number(row.tpm), maxInFlight: Number(row.maxInFlight) } : configured;
    return {
      ...route, ...limits, maxOutputTokens: configured.maxOutputTokens,
      source: (row?.source as 'config' | 'admin' | undefined) ?? 'config', updatedBy: (row?.updatedBy as string | null) ?? null,
      updatedAt: row ? new Date(row.updatedAt as Date) : null, inFlight: Number(row?.inFlight ?? 0),
      cooldownUntil: cooldown && cooldown > now!.now ? cooldown : null, rateFactor: Number(row?.factor ?? 1000),
      window: {
        start: new Date(now!.windowStart), requests: Number(row?.windowRequests ?? 0), tokens: Number(row?.windowTokens ?? 0),
        rpm: Number(row?.admittedRpm ?? limits.rpm), tpm: Number(row?.admittedTpm ?? limits.tpm),
      },
    };
  });
}

/**
 * Sets some of a model's limits at run time (`source` becomes `admin`: the configuration no longer changes them).
 * Fields not given keep their current value. @throws InvalidLimitError, UnknownModelError
 */
export async function setModelLimits(
  o: LimitsRepositoryOptions, route: ModelRoute, changes: Partial<Record<AdminLimitField, unknown>>, actor: string,
): Promise<void> {
  const configured = knownModel(o, route);
  const given = Object.keys(changes).filter((f) => changes[f as AdminLimitField] !== undefined);
  const unknown = given.filter((f) => !(ADMIN_LIMIT_FIELDS as readonly string[]).includes(f));
  if (unknown.length) throw new InvalidLimitError(unknown.join(', '), 'cannot be set (rpm, tpm and maxInFlight can)');
  if (given.length === 0) throw new InvalidLimitError('limits', 'must name at least one of rpm, tpm, maxInFlight');
  const values = Object.fromEntries(ADMIN_LIMIT_FIELDS.map((f) => [f, changes[f] === undefined ? null : validLimit(f, changes[f])])) as Record<AdminLimitField, number | null>;
  const pool = o.pool ?? getSqlPool();
  await pool.query(
    `INSERT INTO \`ProviderLimit\` (provider, model, rpm, tpm, maxInFlight, source, updatedBy, updatedAt)
     VALUES (?, ?, ?, ?, ?, 'admin', ?, UTC_TIMESTAMP(3))
     ON DUPLICATE KEY UPDATE rpm = COALESCE(?, rpm), tpm = COALESCE(?, tpm), maxInFlight = COALESCE(?, maxInFlight),
       source = 'admin', updatedBy = ?, updatedAt = UTC_TIMESTAMP(3)`,
    [
      route.provider, route.model, values.rpm ?? configured.rpm, values.tpm ?? configured.tpm, values.maxInFlight ?? configured.maxInFlight,
      actor.slice(0, 128), values.rpm, values.tpm, values.maxInFlight, actor.slice(0, 128),
    ],
  );
}

/** Gives the model back to the configuration (its configured limits, `source = 'config'`). @throws UnknownModelError */
export async function resetModelLimits(o: LimitsRepositoryOptions, route: ModelRoute, actor: string): Promise<void> {
  const l = knownModel(o, route);
  await (o.pool ?? getSqlPool()).query(
    `UPDATE \`ProviderLimit\` SET rpm = ?, tpm = ?, maxInFlight = ?, source = 'config', updatedBy = ?, updatedAt = UTC_TIMESTAMP(3)
     WHERE provider = ? AND model = ?`,
    [l.rpm, l.tpm, l.maxInFlight, actor.slice(0, 128), route.provider, route.model],
  );
}

/** Ends a model's cooldown now and restores its full rate (an admin who knows the provider is fine again). */
export async function endCooldown(o: LimitsRepositoryOptions, route: ModelRoute, actor: string): Promise<void> {
  knownModel(o, route);
  await (o.pool ?? getSqlPool()).query(
    'UPDATE `ProviderLimit` SET cooldownUntil = NULL, rateFactor = 1000, updatedBy = ?, updatedAt = UTC_TIMESTAMP(3) WHERE provider = ? AND model = ?',
    [actor.slice(0, 128), route.provider, route.model],
  );
}

function knownModel(o: LimitsRepositoryOptions, route: ModelRoute) {
  const routed = o.routes.some((r) => r.provider === route.provider && r.model === route.model);
  const limits = o.config.limitsFor(route);
  if (!routed || !limits) throw new UnknownModelError(route.provider, route.model);
  return limits;
}
