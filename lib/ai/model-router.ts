/**
 * Model routing: a job definition names a model tier (`fast`, `standard`, `reasoning`, ...); the routing table
 * maps each tier to an ordered list of provider/model pairs. The gateway tries them in order and falls back
 * to the next on a retryable provider failure. The table is data (see lib/ai/provider-config.ts for the one
 * built from the environment); nothing branches on a tier or provider name.
 */
import { EngineError } from '../errors.ts';
import type { AiProvider, CredentialSet, ModelRoute } from './types.ts';

/** Tier → provider/model pairs, most preferred first. */
export type RoutingTable = Readonly<Record<string, readonly ModelRoute[]>>;

/** A definition asked for a tier the routing table does not have: a configuration bug, not retryable. */
export class UnknownModelTierError extends EngineError {
  readonly code = 'UNKNOWN_MODEL_TIER';
  constructor(readonly tier: string) {
    super(`Unknown model tier "${tier}"`);
  }
}

/** The routing table names a provider that is not registered; raised when the router is built (at startup). */
export class InvalidRoutingTableError extends EngineError {
  readonly code = 'INVALID_ROUTING_TABLE';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid routing table: ${problems.join('; ')}`);
  }
}

/**
 * Resolves a tier to the routes a credential can use, and a route to its provider.
 * Invariant: every route in the table names a registered provider (checked in the constructor).
 */
export class ModelRouter {
  readonly #table: RoutingTable;
  readonly #providers: ReadonlyMap<string, AiProvider>;

  /** @throws InvalidRoutingTableError when a route names an unregistered provider or a tier has no routes. */
  constructor(table: RoutingTable, providers: Iterable<AiProvider>) {
    this.#providers = new Map([...providers].map((p) => [p.name, p]));
    const problems = Object.entries(table).flatMap(([tier, routes]) => [
      ...(routes.length === 0 ? [`tier "${tier}" has no routes`] : []),
      ...routes.filter((r) => !this.#providers.has(r.provider)).map((r) => `tier "${tier}" routes to unknown provider "${r.provider}"`),
    ]);
    if (problems.length > 0) throw new InvalidRoutingTableError(problems);
    this.#table = Object.freeze(Object.fromEntries(Object.entries(table).map(([t, rs]) => [t, Object.freeze(rs.map((r) => ({ ...r })))])));
  }

  /** Every tier the table defines. */
  get tiers(): string[] {
    return Object.keys(this.#table);
  }

  /** Every provider/model any tier routes to, once each (what the capacity configuration must cover). */
  get routes(): ModelRoute[] {
    const seen = new Map<string, ModelRoute>();
    for (const r of Object.values(this.#table).flat()) seen.set(`${r.provider}/${r.model}`, { ...r });
    return [...seen.values()];
  }

  /**
   * The tier's routes in table order, keeping only those whose provider `credentials` holds a key for
   * (a user's own DeepSeek key never reaches another vendor). May be empty.
   * @throws UnknownModelTierError
   */
  routesFor(tier: string, credentials: CredentialSet): ModelRoute[] {
    const routes = Object.hasOwn(this.#table, tier) ? this.#table[tier] : undefined;
    if (!routes) throw new UnknownModelTierError(tier);
    return routes.filter((r) => Boolean(credentials.keyFor(r.provider))).map((r) => ({ ...r }));
  }

  /** The provider a route names. Routes from {@link routesFor} always resolve. */
  providerFor(route: ModelRoute): AiProvider {
    const provider = this.#providers.get(route.provider);
    if (!provider) throw new InvalidRoutingTableError([`unknown provider "${route.provider}"`]);
    return provider;
  }
}
