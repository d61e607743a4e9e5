/**
 * The caps admins set, as rows (`SpendCap`): each scope's default (subject `*`) and the overrides for single users
 * or job types. What the admin budgets view lists beside the use of each cap (./caps-repository.ts). Admins set
 * these by hand, so there are few; the list is bounded anyway and says when it was cut.
 */
import { getSqlPool, type SqlPool } from '../db/sql-pool.ts';
import { DEFAULT_SUBJECT, SPEND_SCOPES, validCapUsd, type SpendCapDefaults, type SpendScope } from './caps.ts';

/** An admin's cap. */
export interface SpendCapRow {
  scope: SpendScope;
  subject: string;
  capUsd: string;
  updatedBy: string | null;
  updatedAt: Date;
}

/** A scope's default cap: an admin's (`default`), else the stage's configuration (`config`), else none. */
export interface ScopeDefault {
  scope: SpendScope;
  capUsd: string | null;
  source: 'default' | 'config' | null;
  /** The stage's configured default (SPEND_CAP_*_USD), whatever an admin set over it. */
  configuredUsd: string | null;
}

export interface SpendCapListing {
  defaults: ScopeDefault[];
  /** Caps for one user or one job type, by scope then subject; at most `limit`. */
  overrides: SpendCapRow[];
  /** True when there were more overrides than `limit`. */
  truncated: boolean;
}

/** Every scope's default and up to `limit` overrides, in one query. */
export async function listSpendCaps(defaults: SpendCapDefaults, limit = 200, pool: SqlPool = getSqlPool()): Promise<SpendCapListing> {
  const rows = (await pool.query(
    `(SELECT scope, subject, capUsd, updatedBy, updatedAt FROM \`SpendCap\` WHERE subject = ?)
     UNION ALL
     (SELECT scope, subject, capUsd, updatedBy, updatedAt FROM \`SpendCap\` WHERE subject <> ? ORDER BY scope, subject LIMIT ?)`,
    [DEFAULT_SUBJECT, DEFAULT_SUBJECT, limit + 1],
  )) as { scope: SpendScope; subject: string; capUsd: unknown; updatedBy: string | null; updatedAt: Date }[];
  const all = rows.map((r) => ({ scope: r.scope, subject: r.subject, capUsd: validCapUsd('capUsd', String(r.capUsd)), updatedBy: r.updatedBy, updatedAt: new Date(r.updatedAt) }));
  const own = new Map(all.filter((r) => r.subject === DEFAULT_SUBJECT).map((r) => [r.scope, r.capUsd]));
  const overrides = all.filter((r) => r.subject !== DEFAULT_SUBJECT);
  return {
    defaults: SPEND_SCOPES.map((scope) => {
      const admin = own.get(scope);
      const configured = defaults[scope];
      return { scope, capUsd: admin ?? configured, source: admin ? 'default' : configured ? 'config' : null, configuredUsd: configured };
    }),
    overrides: overrides.slice(0, limit),
    truncated: overrides.length > limit,
  };
}
