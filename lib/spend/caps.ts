/**
 * Spending caps in USD: the scopes, their UTC periods, the stage's defaults and the validation every write of a
 * cap goes through.
 *
 * | scope          | subject    | period            | applies to                                          |
 * |----------------|------------|-------------------|-----------------------------------------------------|
 * | `user_day`     | user id    | UTC day           | the user's calls on the platform's key; on their own key only where a cap was set for them |
 * | `user_month`   | user id    | UTC calendar month| the same                                            |
 * | `job_type_day` | job type   | UTC day           | calls on the platform's key                         |
 * | `platform_day` | `*`        | UTC day           | calls on the platform's key                         |
 *
 * A cap row with subject `*` is the scope's default; any other subject is an override for that user or job type
 * (admins set both at run time). Defaults from the environment (CDK context per stage): `SPEND_CAP_USER_DAY_USD`
 * (2), `SPEND_CAP_USER_MONTH_USD` (20), `SPEND_CAP_JOB_TYPE_DAY_USD` (50), `SPEND_CAP_PLATFORM_DAY_USD` (100);
 * `off` leaves a scope without a default. Why these: a job costs about $0.001–0.002 on deepseek-chat and its
 * reservation about $0.002, so $2 a day is ~1,000 jobs for one user (above the 3 × 200 a day the job types'
 * quotas allow), and $100 a day for the platform is ~50,000 jobs; raise them with the traffic.
 */
import { ConfigurationError } from '../config/aws.ts';
import { InvalidLimitError } from '../capacity/errors.ts';

/** The scopes in the primary key's order: counters are always locked in this order (no deadlocks). */
export const SPEND_SCOPES = ['job_type_day', 'platform_day', 'user_day', 'user_month'] as const;
export type SpendScope = (typeof SPEND_SCOPES)[number];

/** The subject of the platform scope, and of every scope's default cap. */
export const DEFAULT_SUBJECT = '*';

export const SPEND_CAP_ENV: Readonly<Record<SpendScope, string>> = {
  job_type_day: 'SPEND_CAP_JOB_TYPE_DAY_USD',
  platform_day: 'SPEND_CAP_PLATFORM_DAY_USD',
  user_day: 'SPEND_CAP_USER_DAY_USD',
  user_month: 'SPEND_CAP_USER_MONTH_USD',
};

export const DEFAULT_SPEND_CAPS_USD: Readonly<Record<SpendScope, string>> = {
  job_type_day: '50', platform_day: '100', user_day: '2', user_month: '20',
};

/** The largest cap accepted (USD); counters are DECIMAL(14,8). */
export const MAX_CAP_USD = 100_000;

/** The stage's default cap per scope, `null` where it is `off`. */
export type SpendCapDefaults = Readonly<Record<SpendScope, string | null>>;

/**
 * A cap as an exact decimal string with 8 places (the counters' scale): a positive number of dollars, at most
 * {@link MAX_CAP_USD}, with at most 8 decimals. Accepts a number or a decimal string.
 * @throws InvalidLimitError for 0, a negative, a non-number or an absurdly large value
 */
export function validCapUsd(field: string, value: unknown): string {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string' || !/^\d+(\.\d{1,8})?$/.test(text.trim())) {
    throw new InvalidLimitError(field, 'must be a positive number of US dollars with at most 8 decimals');
  }
  const [whole = '0', fraction = ''] = text.trim().split('.');
  const units = BigInt(whole) * 100_000_000n + BigInt(fraction.padEnd(8, '0'));
  if (units === 0n) throw new InvalidLimitError(field, 'must be more than 0');
  if (units > BigInt(MAX_CAP_USD) * 100_000_000n) throw new InvalidLimitError(field, `must be at most ${MAX_CAP_USD}`);
  const s = units.toString().padStart(9, '0');
  return `${s.slice(0, -8)}.${s.slice(-8)}`;
}

/** The default caps from the environment (see the module comment). @throws ConfigurationError */
export function spendCapDefaultsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): SpendCapDefaults {
  const caps = {} as Record<SpendScope, string | null>;
  for (const scope of SPEND_SCOPES) {
    const raw = env[SPEND_CAP_ENV[scope]]?.trim();
    if (raw === 'off') caps[scope] = null;
    else {
      try {
        caps[scope] = validCapUsd(SPEND_CAP_ENV[scope], raw || DEFAULT_SPEND_CAPS_USD[scope]);
      } catch (err) {
        if (err instanceof InvalidLimitError) throw new ConfigurationError(SPEND_CAP_ENV[scope], `${err.message.replace(`${SPEND_CAP_ENV[scope]} `, '')} (or "off")`);
        throw err;
      }
    }
  }
  return caps;
}

/** True when any scope has a default cap: then every model a route may call needs a price. */
export function anyCapEnabled(defaults: SpendCapDefaults): boolean {
  return SPEND_SCOPES.some((scope) => defaults[scope] !== null);
}

/** The end of the UTC period that contains `now`: the next midnight (day scopes) or the next month's first day. */
export function periodEnd(scope: SpendScope, now: Date): Date {
  if (scope === 'user_month') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}
