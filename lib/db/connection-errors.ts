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

/**
 * Driver error codes (`code`, or the original code Prisma's adapter keeps) that mean "the database cannot be
 * reached or the connection is gone", not "this statement is wrong". Both the raw pool and Prisma's adapter
 * use the mariadb driver; mysql2 (migrator, tests) shares the socket and server codes.
 */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  // Sockets and DNS.
  'ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', 'EPIPE', 'EAI_AGAIN', 'ECONNABORTED',
  'PROTOCOL_CONNECTION_LOST',
  // Server: too many connections, shutting down, connection killed (MariaDB), query interrupted, idle-disconnected
  // (MySQL 8's name; mysql2 uses it, the mariadb driver names errno 4031 otherwise: see the errnos below), and the
  // RDS Proxy's "Unknown error". No CR_SERVER_GONE_ERROR / CR_SERVER_LOST (2006, 2013): those are codes of the C
  // client library, which no server or proxy sends and neither Node driver reports (see below).
  'ER_CON_COUNT_ERROR', 'ER_TOO_MANY_USER_CONNECTIONS', 'ER_SERVER_SHUTDOWN', 'ER_CONNECTION_KILLED', 'ER_QUERY_INTERRUPTED',
  'ER_CLIENT_INTERACTION_TIMEOUT', 'ER_UNKNOWN_ERROR',
  // mariadb driver: the socket closed under a command, a command on a closed connection ("Cannot execute new
  // commands: connection closed"), socket/connect timeouts, pool acquire timeout, pool without connections.
  'ER_SOCKET_UNEXPECTED_CLOSE', 'ER_CONNECTION_ALREADY_CLOSED', 'ER_CMD_CONNECTION_CLOSED', 'ER_CMD_NOT_EXECUTED_DESTROYED',
  'ER_SOCKET', 'ER_SOCKET_TIMEOUT', 'ER_CONNECTION_TIMEOUT', 'ER_GET_CONNECTION_TIMEOUT', 'ER_POOL_NO_CONNECTION',
  // Prisma: can't reach, timed out, server closed the connection, pool timeout, transaction API failure
  // (a transaction whose connection died, or that could not start in time), connection error.
  'P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2039',
  // Ours: the database's secret could not be read from Secrets Manager (lib/config/database-secret.ts), or the
  // database refused its credentials even after a fresh read (lib/db/credential-rotation.ts).
  'DATABASE_SECRET_UNAVAILABLE', 'DATABASE_CREDENTIALS_REJECTED',
]);

/**
 * The same failures as numbers (`errno`, or the `code` Prisma's adapter copies from the driver's errno). A lost
 * connection never arrives as 2006 or 2013 (the C client's CR_SERVER_GONE_ERROR / CR_SERVER_LOST): the mariadb
 * driver reports its own 45001/45004/45009/45013 (ER_CONNECTION_ALREADY_CLOSED, ER_CMD_NOT_EXECUTED_DESTROYED,
 * ER_SOCKET_UNEXPECTED_CLOSE, ER_CMD_CONNECTION_CLOSED), mysql2 `PROTOCOL_CONNECTION_LOST` or a socket code, both
 * with `fatal: true`.
 */
const UNAVAILABLE_ERRNOS: ReadonlySet<number> = new Set([
  // Too many connections, server shutdown, too many user connections, query interrupted (KILL QUERY).
  1040, 1053, 1203, 1317,
  // ER_CONNECTION_KILLED: MariaDB only (MySQL 8 closes a killed connection without a message: the driver's 45009).
  1927,
  // MySQL 8.0.24+: ER_CLIENT_INTERACTION_TIMEOUT, "The client was disconnected by the server because of
  // inactivity" (wait_timeout). The mariadb driver knows 4031 by MariaDB's meaning, and so reports it with code
  // ER_REFERENCED_TRG_DOES_NOT_EXIST (a CREATE TRIGGER … FOLLOWS error we never cause): matched by number.
  4031,
  // RDS Proxy: "ERROR 1105 (HY000): Unknown error" — AWS lists it among the errors of connecting to a MySQL proxy
  // with no cause but "An unknown error occurred" (RDS Proxy troubleshooting); MySQL itself sends 1105
  // (ER_UNKNOWN_ERROR) only for internal failures. Neither is the request's fault, and a later try may succeed:
  // 503 with Retry-After, and an infrastructure failure for a job (its attempt refunded, at most 3 times).
  1105,
  // RDS Proxy: "ERROR 9501 (HY000): Timed-out waiting to acquire database connection" (its pool stayed full for
  // the proxy's ConnectionBorrowTimeout; RDS Proxy troubleshooting, MySQL errors).
  9501,
  45001, 45004, 45009, 45012, 45013, 45019, 45026, 45028, 45061,
]);

/** Prisma driver-adapter error kinds of the same class. */
const UNAVAILABLE_KINDS: ReadonlySet<string> = new Set(['TooManyConnections', 'ConnectionClosed', 'SocketTimeout', 'DatabaseNotReachable']);

/** What an error (or a Prisma adapter's cause) may carry, all optional. */
interface ErrorShape {
  code?: unknown;
  errno?: unknown;
  fatal?: unknown;
  kind?: unknown;
  originalCode?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: { cause?: ErrorShape } };
}

/** Every error in the chain of `err`: itself, its `cause`s, and a Prisma error's driver-adapter cause. */
function* errorChain(err: unknown): Generator<ErrorShape> {
  const queue: unknown[] = [err];
  for (let seen = 0; queue.length > 0 && seen < 12; seen += 1) {
    const e = queue.shift();
    if (!e || typeof e !== 'object') continue;
    const shape = e as ErrorShape;
    yield shape;
    queue.push(shape.cause, shape.meta?.driverAdapterError?.cause);
  }
}

/**
 * True when `err` (a driver error, or a Prisma error wrapping one) says the database is unreachable, overloaded
 * or dropped the connection mid-request — the API answers 503 PLATFORM_UNAVAILABLE with Retry-After for these
 * instead of 500. Reads codes, errnos and the driver's `fatal` flag (the connection is unusable) only.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (e.fatal === true && typeof e.errno === 'number') return true;
    if (typeof e.kind === 'string' && UNAVAILABLE_KINDS.has(e.kind)) return true;
    for (const code of [e.code, e.originalCode]) {
      if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
      if (typeof code === 'number' && UNAVAILABLE_ERRNOS.has(code)) return true;
    }
    if (typeof e.errno === 'number' && UNAVAILABLE_ERRNOS.has(e.errno)) return true;
  }
  return false;
}

/** True when some error in the chain of `err` satisfies `test`. */
function anyInChain(err: unknown, test: (e: ErrorShape) => boolean): boolean {
  for (const e of errorChain(err)) if (test(e)) return true;
  return false;
}

const ER_LOCK_DEADLOCK = 1213;
const ER_LOCK_WAIT_TIMEOUT = 1205;

/**
 * True when the server chose `err`'s transaction as a deadlock victim — raw driver (errno 1213) or Prisma (P2034,
 * the adapter's `TransactionWriteConflict`). The transaction was rolled back whole: running it again is safe.
 */
export function isDeadlock(err: unknown): boolean {
  return anyInChain(err, (e) => e.errno === ER_LOCK_DEADLOCK || e.code === 'ER_LOCK_DEADLOCK' || e.code === 'P2034' || e.kind === 'TransactionWriteConflict');
}

/**
 * True for a lock-wait timeout (errno 1205; through Prisma the adapter's cause carries code 1205). Not retried:
 * it already waited `innodb_lock_wait_timeout`; the API answers 503 with Retry-After.
 */
export function isLockWaitTimeout(err: unknown): boolean {
  return anyInChain(err, (e) => e.errno === ER_LOCK_WAIT_TIMEOUT || e.code === 'ER_LOCK_WAIT_TIMEOUT' || e.code === ER_LOCK_WAIT_TIMEOUT);
}

/** A deadlock or a lock-wait timeout: contention, never the client's fault and never a 500. */
export function isLockConflict(err: unknown): boolean {
  return isDeadlock(err) || isLockWaitTimeout(err);
}

/** MySQL/MariaDB's ER_ACCESS_DENIED_ERROR; RDS Proxy answers the same to a password its secret does not hold. */
const ER_ACCESS_DENIED = 1045;

/**
 * True when a connection was refused for its credentials: errno 1045 (`ER_ACCESS_DENIED_ERROR`) — the server's
 * answer, and RDS Proxy's (`ERROR 1045 (28000): Access denied for user …`, RDS Proxy troubleshooting, MySQL) —
 * or Prisma's adapter kind for it. Nothing ran on such a connection.
 */
export function isAuthenticationFailure(err: unknown): boolean {
  return anyInChain(err, (e) => e.errno === ER_ACCESS_DENIED || e.code === 'ER_ACCESS_DENIED_ERROR' || e.code === ER_ACCESS_DENIED
    || e.originalCode === String(ER_ACCESS_DENIED) || e.kind === 'AuthenticationFailed');
}

/**
 * mariadb pool errors raised before a connection was handed out: acquire timeout (45028), pool ending (45037)
 * or closed (45027), no connection (45061), not initialised (45060); Prisma's pool timeout (P2024). The
 * statement that asked never ran.
 */
const ACQUISITION_ERRNOS: ReadonlySet<number> = new Set([45027, 45028, 45037, 45060, 45061]);

/** True when `err` says no connection was handed out, so the statement never reached the server. */
export function isConnectionAcquisitionFailure(err: unknown): boolean {
  return anyInChain(err, (e) => (typeof e.errno === 'number' && ACQUISITION_ERRNOS.has(e.errno))
    || (typeof e.code === 'number' && ACQUISITION_ERRNOS.has(e.code)) || ACQUISITION_ERRNOS.has(Number(e.originalCode)) || e.code === 'P2024');
}
