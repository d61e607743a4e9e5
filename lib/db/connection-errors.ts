import { parseDatabaseUrl } from './database-url.ts';

/**
 * A human message for a failure to reach or use MySQL, with the next step to take.
 * Never includes the password.
 */
export function describeConnectionError(err: unknown, url: string): string {
  const code = (err as { code?: string } | undefined)?.code;
  let where = 'the database';
  try {
    const s = parseDatabaseUrl(url);
    where = `MySQL at ${s.host}:${s.port} (user ${s.user})`;
  } catch {
    /* the URL itself is the problem; the error says so */
  }
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH') {
    return [
      `Cannot reach ${where}: ${code}.`,
      'Start one: `docker compose up -d mysql` (MySQL 8), or install the system package',
      '(`apt-get install mariadb-server && service mariadb start`), or point DATABASE_URL at another server',
      '(mysql://user:password@host:3306/ai_jobs).',
    ].join('\n');
  }
  if (code === 'ER_ACCESS_DENIED_ERROR' || code === 'ER_DBACCESS_DENIED_ERROR') {
    return `${where} refused the credentials in DATABASE_URL (${code}).`;
  }
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Driver codes that mean "the database cannot be reached right now", not "this query is wrong". */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', 'EPIPE',
  'PROTOCOL_CONNECTION_LOST', 'ER_CON_COUNT_ERROR', 'ER_SERVER_SHUTDOWN', 'ER_GET_CONNECTION_TIMEOUT',
  // mariadb connector (through Prisma's adapter): pool timeout, connection closed, socket timeout.
  '45028', '45001', '45009', '45026',
]);

/**
 * True when `err` (a driver error, or a Prisma error wrapping one) says the database is unreachable or
 * overloaded — the API answers 503 PLATFORM_UNAVAILABLE for these instead of 500. Reads error codes only.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 6; depth += 1) {
    const candidate = e as { code?: unknown; meta?: { driverAdapterError?: { cause?: { code?: unknown; originalCode?: unknown } } }; cause?: unknown };
    const adapter = candidate.meta?.driverAdapterError?.cause;
    for (const code of [candidate.code, adapter?.code, adapter?.originalCode]) {
      if (code !== undefined && UNAVAILABLE_CODES.has(String(code))) return true;
    }
    e = candidate.cause;
  }
  return false;
}
