/**
 * A connection that sent a large statement is closed, not pooled again.
 *
 * Why: RDS Proxy pins a client session for the rest of its life once it sends a statement whose text is over
 * 16 KB (AWS, "Avoiding pinning an RDS Proxy"). A pinned session keeps one database connection to itself
 * until the client disconnects, and a pooled connection of a Lambda container lives as long as the container.
 * Large statements are rare but legitimate: a create whose input is long (a quiz's `sourceText` allows 20,000
 * characters) carries it in its snapshot insert, and a projection of a long output writes it. So the pools
 * ({@link closeAfterLargeStatements}, on the raw pool and on the pool given to Prisma's adapter) end such a
 * session with its transaction: the connection is destroyed instead of released, and the proxy's pin ends
 * with it. What it costs: one new connection afterwards, for those rare statements only.
 *
 * The size is the statement text as the driver sends it (text protocol: values are written into the text,
 * quoted and escaped). {@link sentTextBytes} gives an upper bound, so a statement near the limit is treated as
 * over it; nothing over it goes unnoticed. test/db/large-statements.test.ts checks both pools against the server.
 */
import type * as mariadb from 'mariadb';
import { withMethods, type Method } from './method-proxy.ts';

/** AWS: "Any statement with a text size greater than 16 KB causes the proxy to pin the session." */
export const PROXY_PIN_STATEMENT_BYTES = 16 * 1024;

/** Characters the mariadb driver escapes with a backslash in a quoted value: `\`, `'`, `"` and NUL. */
const ESCAPED = /[\\'"\0]/g;

/** An upper bound of the bytes one value adds to the statement text (quotes and escapes included). */
function valueBytes(value: unknown): number {
  if (value === null || value === undefined) return 4; // NULL
  if (typeof value === 'string') return Buffer.byteLength(value) + (value.match(ESCAPED)?.length ?? 0) + 2;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return 32;
  if (value instanceof Date) return 32;
  if (ArrayBuffer.isView(value)) return 2 * value.byteLength + 10; // _binary'…', every byte escaped at worst
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + valueBytes(item) + 1, 2);
  // Any other object is sent as its JSON text.
  return valueBytes(JSON.stringify(value) ?? 'null');
}

/** The values of `query(sql, values)` as a list (the driver takes a single value unwrapped). */
const paramsOf = (values: unknown): unknown[] => (values === undefined ? [] : Array.isArray(values) ? values : [values]);

/** An upper bound of the size of the text the driver sends for `query(sql, values)`. */
export function sentTextBytes(sql: string, values: unknown): number {
  return paramsOf(values).reduce((sum: number, value) => sum + valueBytes(value), Buffer.byteLength(sql));
}

/** The SQL text of `query(sql | { sql }, values)`, and its values. */
function callText(args: unknown[]): { sql: string; values: unknown } {
  const [first, values] = args;
  const sql = typeof first === 'string' ? first : String((first as { sql?: unknown } | null)?.sql ?? '');
  return { sql, values };
}

/**
 * A looser bound that costs no encoding and no scan (a UTF-16 unit is at most 3 UTF-8 bytes, plus at most one
 * escape): every statement of the hot paths is far below the limit by it alone.
 */
function quickBound(sql: string, values: unknown): number {
  let bytes = 3 * sql.length;
  for (const value of paramsOf(values)) bytes += typeof value === 'string' ? 4 * value.length + 2 : valueBytes(value);
  return bytes;
}

/** True when `query(...args)` may send a statement text over {@link PROXY_PIN_STATEMENT_BYTES}. */
export function mayPin(args: unknown[]): boolean {
  const { sql, values } = callText(args);
  return quickBound(sql, values) > PROXY_PIN_STATEMENT_BYTES && sentTextBytes(sql, values) > PROXY_PIN_STATEMENT_BYTES;
}

const STATEMENT_METHODS = new Set(['query', 'execute']);

/**
 * A connection from the pool that remembers whether it sent a large statement; if it did, `release()` (and
 * `end()`, which releases a pooled connection) destroys it instead.
 */
function closingConnection(conn: mariadb.PoolConnection): mariadb.PoolConnection {
  let pinned = false;
  return withMethods(conn, (name, method) => {
    if (typeof name === 'string' && STATEMENT_METHODS.has(name)) {
      return (...args: unknown[]) => {
        if (mayPin(args)) pinned = true;
        return method(...args);
      };
    }
    if (name === 'release' || name === 'end') {
      return async () => {
        if (!pinned) return method();
        conn.destroy();
      };
    }
    return undefined;
  });
}

/**
 * The pool, closing every connection that sent a statement over 16 KB once it is done with it: a large
 * `pool.query` runs on a connection of its own, destroyed afterwards whatever the outcome; a connection taken
 * with `getConnection` is destroyed at its `release()` if any of its statements was large.
 */
export function closeAfterLargeStatements(pool: mariadb.Pool): mariadb.Pool {
  return withMethods(pool, (name, method) => {
    if (typeof name === 'string' && STATEMENT_METHODS.has(name)) {
      return async (...args: unknown[]) => {
        if (!mayPin(args)) return method(...args);
        const conn = await pool.getConnection();
        try {
          return await (conn[name as 'query'] as Method).apply(conn, args);
        } finally {
          conn.destroy();
        }
      };
    }
    if (name === 'getConnection') return async () => closingConnection(await (method() as Promise<mariadb.PoolConnection>));
    return undefined;
  });
}

/** A statement as the driver takes it: text with `?` placeholders, and its values. */
export interface BoundStatement {
  sql: string;
  values: readonly unknown[];
}

/**
 * Statements for a list of items (ids, say) built by `build`, split in halves until each one's text as sent is
 * within `limit` bytes (a single item that is over it still gets a statement of its own).
 */
export function splitByList<T, S extends BoundStatement>(items: readonly T[], build: (items: readonly T[]) => S, limit = PROXY_PIN_STATEMENT_BYTES): S[] {
  const whole = build(items);
  if (items.length <= 1 || sentTextBytes(whole.sql, whole.values) <= limit) return [whole];
  const half = Math.ceil(items.length / 2);
  return [...splitByList(items.slice(0, half), build, limit), ...splitByList(items.slice(half), build, limit)];
}

/**
 * Groups `statements`, in order, into as few multi-statement queries (joined with `;\n`) as keep each query's text
 * as sent within `limit` bytes: one round trip when everything fits, more only when it does not. A statement over
 * the limit by itself makes a query of its own (its connection then needs closing, see above).
 */
export function packStatements<S extends BoundStatement>(statements: readonly S[], limit = PROXY_PIN_STATEMENT_BYTES): S[][] {
  const queries: S[][] = [];
  let current: S[] = [];
  let bytes = 0;
  for (const statement of statements) {
    const size = sentTextBytes(statement.sql, statement.values) + 2; // and its ";\n"
    if (current.length > 0 && bytes + size > limit) {
      queries.push(current);
      current = [];
      bytes = 0;
    }
    current.push(statement);
    bytes += size;
  }
  if (current.length > 0) queries.push(current);
  return queries;
}
