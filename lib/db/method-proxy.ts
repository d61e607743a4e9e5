/**
 * Wrapping a database driver object's methods (the pool guards: ./text-guard.ts, ./large-statements.ts).
 * Every method, wrapped or not, runs with the object itself as `this`: the driver's getters read private
 * fields (`#conn`), which a proxy receiver lacks.
 */
export type Method = (...args: unknown[]) => unknown;

/** `target` behind a proxy whose methods `wrap(name, method)` may replace (undefined: the method as it is). */
export function withMethods<T extends object>(target: T, wrap: (name: string | symbol, method: Method) => Method | undefined): T {
  return new Proxy(target, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (typeof value !== 'function') return value;
      const method = (value as Method).bind(obj);
      return wrap(prop, method) ?? method;
    },
  });
}
