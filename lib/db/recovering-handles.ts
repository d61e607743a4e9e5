/**
 * The stable handles the process holds on its database (`getSqlPool()`, `getPrisma()`): each call goes to the
 * current generation's pool or client (./credential-rotation.ts), and the calls that open a connection run
 * under {@link withCredentialRecovery}, so a rotation of the database secret is survived by every holder at
 * once. Closing a handle (`end`, `$disconnect`) closes the current instance; the handle stays usable.
 */
import { withCredentialRecovery, type SharedMember } from './credential-rotation.ts';

type Method = (...args: unknown[]) => unknown;

/** `member`'s instance behind a stable proxy; `retried` are the methods that open a connection. */
export function recoveringHandle<T extends object>(member: SharedMember<T>, retried: readonly string[]): T {
  const methods = new Set<PropertyKey>(retried);
  return new Proxy({} as T, {
    has: (_, prop) => prop in member.current(),
    get(_, prop) {
      if (prop === 'then') return undefined; // not a thenable: `await handle` must not call into the pool
      if (prop === 'end') return () => member.close();
      if (methods.has(prop)) return (...args: unknown[]) => withCredentialRecovery(() => invoke(member.current(), prop, args));
      return forwarded(member.current(), prop);
    },
  });
}

/** Prisma's client methods that run statements (the interactive `$transaction` is handled apart). */
const CLIENT_STATEMENTS = new Set<PropertyKey>(['$queryRaw', '$queryRawUnsafe', '$executeRaw', '$executeRawUnsafe']);

/**
 * A Prisma client behind a stable proxy: model methods (`db.aiJob.findMany(…)`), raw statements and
 * interactive transactions are retried once on new credentials. A transaction is retried only when its
 * callback never started (its connection was never handed out), so no statement of it runs twice.
 */
export function recoveringPrisma<T extends object>(member: SharedMember<T>): T {
  return new Proxy({} as T, {
    has: (_, prop) => prop in member.current(),
    get(_, prop) {
      if (prop === 'then') return undefined;
      if (prop === '$disconnect') return () => member.close();
      if (prop === '$transaction') return transaction(member);
      if (CLIENT_STATEMENTS.has(prop)) return (...args: unknown[]) => withCredentialRecovery(() => invoke(member.current(), prop, args));
      const value: unknown = Reflect.get(member.current(), prop);
      if (isModelDelegate(value)) return delegate(member, prop);
      return forwarded(member.current(), prop);
    },
  });
}

function transaction<T extends object>(member: SharedMember<T>) {
  return (first: unknown, ...rest: unknown[]) => {
    // The batch form takes promises that already run: nothing to retry.
    if (typeof first !== 'function') return invoke(member.current(), '$transaction', [first, ...rest]);
    let started = false;
    const body = (tx: unknown) => {
      started = true;
      return (first as Method)(tx);
    };
    return withCredentialRecovery(() => {
      started = false;
      return invoke(member.current(), '$transaction', [body, ...rest]) as Promise<unknown>;
    }, () => !started);
  };
}

/** `db.<model>`: every method runs on the current client's delegate. */
function delegate<T extends object>(member: SharedMember<T>, model: PropertyKey): unknown {
  return new Proxy({}, {
    get(_, method) {
      const target = Reflect.get(member.current(), model) as object;
      const value: unknown = Reflect.get(target, method);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => withCredentialRecovery(() => {
        const current = Reflect.get(member.current(), model) as object;
        return (Reflect.get(current, method) as Method).apply(current, args) as Promise<unknown>;
      });
    },
  });
}

/** A model delegate of a Prisma client (`aiJob`, …): an object with query methods. */
function isModelDelegate(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { findMany?: unknown }).findMany === 'function';
}

function invoke(target: object, prop: PropertyKey, args: unknown[]): Promise<unknown> {
  return (Reflect.get(target, prop) as Method).apply(target, args) as Promise<unknown>;
}

function forwarded(target: object, prop: PropertyKey): unknown {
  const value: unknown = Reflect.get(target, prop);
  return typeof value === 'function' ? (value as Method).bind(target) : value;
}
