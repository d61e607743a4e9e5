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

/** A publisher's request, with the scopes whose pushes it carries (two invocations' pushes of a job can share one). */
export interface ScopedRequest {
  scopes?: PublishScope[];
}

export class PublishScope {
  private readonly pending = new Set<ScopedRequest>();
  private waiters: (() => void)[] = [];

  /** `request` carries a publish of this scope, until {@link leaveScopes}. */
  add(request: ScopedRequest): void {
    this.pending.add(request);
  }

  done(request: ScopedRequest): void {
    if (!this.pending.delete(request) || this.pending.size > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** The requests still carrying this scope's publishes. */
  requests(): ScopedRequest[] {
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

/** `request` now carries a push made in `scope` (none: outside any invocation). */
export function joinScope(request: ScopedRequest, scope: PublishScope | undefined): void {
  if (!scope || request.scopes?.includes(scope)) return;
  (request.scopes ??= []).push(scope);
  scope.add(request);
}

/** `request` is done (answered, failed or abandoned): no scope waits for it any more. */
export function leaveScopes(request: ScopedRequest): void {
  for (const scope of request.scopes ?? []) scope.done(request);
}
