/**
 * DATABASE_URL handling. One URL format (`mysql://user:pass@host:port/db?connectionLimit=10`) feeds the
 * Prisma adapter (mariadb driver), the migration runner (mysql2) and the test harness.
 */
export const DEFAULT_DATABASE_URL = 'mysql://root@127.0.0.1:3306/ai_jobs';

export interface DatabaseSettings {
  host: string;
  port: number;
  user: string;
  password: string | undefined;
  /** Empty when the URL names no database (a server URL). */
  database: string;
  connectionLimit: number;
  /** Needed for MySQL 8 `caching_sha2_password` without TLS (mariadb driver). */
  allowPublicKeyRetrieval: boolean;
  /** `?poolTimeoutMs=N`: how long a query waits for a pooled connection before failing (default 10 s). */
  poolTimeoutMs: number;
  /** `?ssl=true`: TLS with certificate verification (RDS Proxy requires TLS; Node trusts its certificate). */
  ssl: boolean;
  /**
   * `?idleTimeoutSeconds=N` (default 30): a pooled connection idle this long is closed (all but one, see
   * {@link poolOptions}), so a Lambda holds extra connections only while it works, and briefly after.
   */
  idleTimeoutSeconds: number;
  /** `?connectTimeoutMs=N` (default 8 s): enough for TCP + TLS from a cold VPC Lambda to RDS Proxy. */
  connectTimeoutMs: number;
}

/** A pooled connection idle longer than this is pinged before it is handed out (mariadb's `minDelayValidation`). */
export const POOL_VALIDATION_AFTER_IDLE_MS = 500;
/** How long that ping may take before the connection is discarded for a new one (mariadb's `pingTimeout`). */
export const POOL_PING_TIMEOUT_MS = 250;

/**
 * The mariadb pool settings both pools share (Prisma's adapter pool, lib/db/client.ts, and the raw pool,
 * lib/db/sql-pool.ts): the URL's size as a ceiling, as few connections kept as the driver allows, idle ones
 * closed soon, and a connect timeout that survives TLS from a cold VPC Lambda.
 *
 * `minimumIdle: 1`, not 0: mariadb 3.4.5 (the version Prisma's adapter pins) only opens a connection while
 * fewer than `minimumIdle` are idle, so with 0 a pool never opens any (every request times out; measured).
 * With 1 a pool keeps one idle connection and opens the next when that one is taken, up to the limit;
 * connections beyond the first are closed after `idleTimeoutSeconds` idle.
 *
 * A pooled connection may be closed under the pool: RDS Proxy closes client connections idle for its
 * IdleClientTimeout (infra/data-layer.ts), and a Lambda container frozen between invocations finds its sockets
 * dead when it thaws. The driver's own validation covers it: a connection idle for more than
 * `minDelayValidation` ms is pinged (COM_PING, at most `pingTimeout` ms) before the pool hands it out, and one that
 * fails is discarded for another, so the request's first query runs on a live connection. Nothing is retried: a
 * statement that fails on a connection lost mid-transaction fails (test/db/pool-survival.test.ts).
 */
export function poolOptions(s: DatabaseSettings) {
  return {
    host: s.host, port: s.port, user: s.user, password: s.password, database: s.database,
    connectionLimit: s.connectionLimit, minimumIdle: 1, idleTimeout: s.idleTimeoutSeconds,
    connectTimeout: s.connectTimeoutMs, acquireTimeout: Math.max(s.poolTimeoutMs, s.connectTimeoutMs),
    minDelayValidation: POOL_VALIDATION_AFTER_IDLE_MS, pingTimeout: POOL_PING_TIMEOUT_MS,
    allowPublicKeyRetrieval: s.allowPublicKeyRetrieval, ...tlsOptions(s),
    // Timestamps are stored and read as UTC whatever the server's time zone.
    timezone: 'Z',
  };
}

/** Driver TLS options for the settings: verify the server certificate, or no TLS. */
export function tlsOptions(s: Pick<DatabaseSettings, 'ssl'>): { ssl: { rejectUnauthorized: true } } | Record<string, never> {
  return s.ssl ? { ssl: { rejectUnauthorized: true } } : {};
}

export class InvalidDatabaseUrlError extends Error {
  constructor(reason: string) {
    // Never echo the URL: it may carry a password.
    super(`DATABASE_URL is invalid: ${reason}`);
    this.name = 'InvalidDatabaseUrlError';
  }
}

/** Parses a `mysql://` or `mariadb://` URL. */
export function parseDatabaseUrl(url: string): DatabaseSettings {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidDatabaseUrlError('not a URL (expected mysql://user:password@host:3306/database)');
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') {
    throw new InvalidDatabaseUrlError(`unsupported scheme ${parsed.protocol} (expected mysql:)`);
  }
  const limit = Number(parsed.searchParams.get('connectionLimit') ?? parsed.searchParams.get('connection_limit') ?? 10);
  return {
    host: decodeURIComponent(parsed.hostname) || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username) || 'root',
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')),
    connectionLimit: Number.isInteger(limit) && limit > 0 ? limit : 10,
    allowPublicKeyRetrieval: parsed.searchParams.get('allowPublicKeyRetrieval') !== 'false',
    ssl: parsed.searchParams.get('ssl') === 'true',
    poolTimeoutMs: positiveInt(parsed.searchParams.get('poolTimeoutMs'), 10_000),
    idleTimeoutSeconds: positiveInt(parsed.searchParams.get('idleTimeoutSeconds'), 30),
    connectTimeoutMs: positiveInt(parsed.searchParams.get('connectTimeoutMs'), 8_000),
  };
}

function positiveInt(value: string | null, fallback: number): number {
  const n = Number(value ?? fallback);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** The same server with another database name (used for per-worker test databases). */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The URL from the environment, or the documented local default. */
export function databaseUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL;
}
