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
  return new Proxy(target, {
    get(obj, prop) {
      // The target as receiver: the driver's getters read private fields (`#conn`), which a proxy receiver lacks.
      const value: unknown = Reflect.get(obj, prop, obj);
      if (typeof value !== 'function') return value;
      if (typeof prop === 'string' && STATEMENT_METHODS.has(prop)) {
        return (...args: unknown[]) => {
          try {
            checkCall(args);
          } catch (err) {
            if (prop === 'queryStream') throw err;
            return Promise.reject(err);
          }
          return (value as (...a: unknown[]) => unknown).apply(obj, args);
        };
      }
      if (prop === 'getConnection') {
        return async (...args: unknown[]) => guardRunner(await (value as (...a: unknown[]) => Promise<object>).apply(obj, args));
      }
      return (value as (...a: unknown[]) => unknown).bind(obj);
    },
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
  return new Proxy(q, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (prop === 'queryRaw' || prop === 'executeRaw') {
        return (query: SqlQuery) => {
          checkQuery(query);
          return (value as (q: SqlQuery) => unknown).call(obj, query);
        };
      }
      if (prop === 'startTransaction') {
        return async (...args: unknown[]) => guardQueryable(await (value as (...a: unknown[]) => Promise<Queryable>).apply(obj, args));
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(obj) : value;
    },
  });
}

/** Prisma's driver adapter factory, whose adapters (and their transactions) refuse ill-formed text. */
export function guardAdapterFactory<F extends AdapterFactory>(factory: F): F {
  return new Proxy(factory, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (prop === 'connect') return async () => guardQueryable(await (value as () => Promise<Queryable>).call(obj));
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(obj) : value;
    },
  });
}
