/**
 * The database connections refuse lossy text instead of writing `?`.
 *
 * Where the loss happens: the mariadb driver (raw pool and Prisma's adapter alike) encodes a JavaScript string
 * to UTF-8 itself and writes `?` (0x3F) for an unpaired UTF-16 surrogate, before the server sees anything —
 * so no `sql_mode`, connection charset or parameter group can refuse it; two distinct subjects became one
 * user id that way. The guard therefore sits in the client, at the one door every statement passes: the raw
 * pool ({@link guardSqlPool}) and Prisma's driver adapter ({@link guardAdapterFactory}) throw
 * {@link IllFormedTextError} for any ill-formed string parameter. The server's own half needs no session
 * `SET` (RDS Proxy pins sessions on most): the connection character set is utf8mb4, negotiated in the
 * handshake, and the server's `sql_mode` includes STRICT_TRANS_TABLES (the default on MariaDB 10.11 and
 * Aurora MySQL 8; keep it in the parameter group), so a character a column cannot hold is an error, not `?`.
 * test/db/text-guard.test.ts checks both.
 */
import type * as mariadb from 'mariadb';
import { EngineError } from '../errors.ts';
import { withMethods } from './method-proxy.ts';

/** The parts of Prisma's driver adapter interfaces the guard touches (structural: no import of Prisma internals). */
interface SqlQuery {
  sql: string;
  args: unknown[];
}
interface Queryable {
  queryRaw(query: SqlQuery): Promise<unknown>;
  executeRaw(query: SqlQuery): Promise<unknown>;
}
interface AdapterFactory {
  connect(): Promise<Queryable>;
}

/** A statement parameter holds ill-formed UTF-16: refused before it reaches the driver's encoder. */
export class IllFormedTextError extends EngineError {
  readonly code = 'ILL_FORMED_TEXT';
  constructor() {
    super('A statement parameter is not well-formed Unicode (unpaired surrogate); refused rather than stored as "?"');
  }
}

/**
 * True for {@link IllFormedTextError} as thrown by the raw pool, and as Prisma's client rethrows it (a
 * PrismaClientKnownRequestError carrying the same `code`, the original not kept as `cause`).
 */
export function isIllFormedTextError(err: unknown): boolean {
  return err instanceof IllFormedTextError || (err as { code?: unknown } | null)?.code === 'ILL_FORMED_TEXT';
}

/**
 * Throws {@link IllFormedTextError} when any string in `values` (arrays and plain objects walked, the driver
 * serialises objects as JSON) has a lone surrogate.
 */
export function assertWellFormedParams(values: unknown): void {
  const stack: unknown[] = [values];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!v.isWellFormed()) throw new IllFormedTextError();
    } else if (Array.isArray(v)) {
      stack.push(...v);
    } else if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      for (const [key, item] of Object.entries(v)) stack.push(key, item);
    }
  }
}

/** The values of `query(sql, values)` / `query({ sql }, values)` / `batch(sql, rows)`. */
function checkCall(args: unknown[]): void {
  const [first, values] = args;
  if (typeof first === 'string' && !first.isWellFormed()) throw new IllFormedTextError();
  assertWellFormedParams(values);
}

const STATEMENT_METHODS = new Set(['query', 'execute', 'batch', 'queryStream']);

/** `target` with its statement methods checking their parameters first (and `getConnection` guarded too). */
function guardRunner<T extends object>(target: T): T {
  return withMethods(target, (name, method) => {
    if (typeof name === 'string' && STATEMENT_METHODS.has(name)) {
      return (...args: unknown[]) => {
        try {
          checkCall(args);
        } catch (err) {
          if (name === 'queryStream') throw err;
          return Promise.reject(err);
        }
        return method(...args);
      };
    }
    if (name === 'getConnection') return async (...args: unknown[]) => guardRunner(await (method(...args) as Promise<object>));
    return undefined;
  });
}

/** The raw pool, refusing ill-formed text on every statement of the pool and of its connections. */
export function guardSqlPool(pool: mariadb.Pool): mariadb.Pool {
  return guardRunner(pool);
}

function checkQuery(query: SqlQuery): void {
  if (!query.sql.isWellFormed()) throw new IllFormedTextError();
  assertWellFormedParams(query.args);
}

function guardQueryable<T extends Queryable>(q: T): T {
  return withMethods(q, (name, method) => {
    if (name === 'queryRaw' || name === 'executeRaw') {
      return (query: unknown) => {
        checkQuery(query as SqlQuery);
        return method(query);
      };
    }
    if (name === 'startTransaction') return async (...args: unknown[]) => guardQueryable(await (method(...args) as Promise<Queryable>));
    return undefined;
  });
}

/** Prisma's driver adapter factory, whose adapters (and their transactions) refuse ill-formed text. */
export function guardAdapterFactory<F extends AdapterFactory>(factory: F): F {
  return withMethods(factory, (name, method) => (name === 'connect' ? async () => guardQueryable(await (method() as Promise<Queryable>)) : undefined));
}
