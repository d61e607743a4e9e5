/**
 * A publish scope: the realtime publishes one handler invocation made (lib/realtime/handler-publishing.ts runs
 * each invocation in one). A publisher's `flush` inside a scope waits for that scope's requests only, and at its
 * bound abandons only those: where several invocations share a process and its publisher (the local runtime
 * runs every batch of a queue on one thread), one invocation's flush neither waits for nor drops another's
 * publishes. Outside any scope, `flush` covers the whole publisher.
 *
 * The scope follows the invocation's asynchronous calls (AsyncLocalStorage): a status published after a commit,
 * an attempt's chunk batch published from its timer.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export class PublishScope {
  private readonly pending = new Set<object>();
  private waiters: (() => void)[] = [];

  /** `request` carries a publish of this scope, until {@link done}. */
  add(request: object): void {
    this.pending.add(request);
  }

  done(request: object): void {
    if (!this.pending.delete(request) || this.pending.size > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** The requests still carrying this scope's publishes. */
  requests(): object[] {
    return [...this.pending];
  }

  /** Resolves once no request carries this scope's publishes (at once if none does). */
  idle(): Promise<void> {
    return this.pending.size === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

const storage = new AsyncLocalStorage<PublishScope>();

/** Runs `fn` in a new publish scope. */
export function inPublishScope<R>(fn: () => Promise<R>): Promise<R> {
  return storage.run(new PublishScope(), fn);
}

/** The scope of the code running now, if any. */
export function currentPublishScope(): PublishScope | undefined {
  return storage.getStore();
}
