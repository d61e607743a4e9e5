/**
 * The process-wide database pools survive a rotation of the database secret.
 *
 * The secret rotates (infra/data-layer.ts: single-user rotation). Connections opened with the old password stay
 * open; a NEW connection with it is refused with errno 1045 — by the database, and by RDS Proxy once it holds
 * the new secret (docs/deploy.md "Secret rotation"). So a container that read the secret at its cold start
 * fails the first time its pools open a connection after the rotation. Here:
 *
 * - The pools are members of a *generation*: the credentials (DATABASE_URL) they were built from. Every holder
 *   (engine, dispatcher, API and reaper dependencies, repositories) holds a stable handle (`getPrisma()`,
 *   `getSqlPool()`) that forwards each call to the current generation's instance, so a rebuild reaches all of
 *   them at once.
 * - A refused connection is noticed where it happens: each pool reports its connection errors
 *   ({@link PoolHooks}); errno 1045 marks the generation. (The driver reports the FIRST error since its last
 *   good connection, so a 1045 may hide behind an earlier network error: then one direct connection, at most
 *   every {@link PROBE_INTERVAL_MS}, asks the server which it is.)
 * - Recovery: the secret is read again; new credentials make a new generation, and the old one's pools are
 *   ended, which releases every call still waiting for one of its connections. A generation without a single
 *   open connection and nothing better to move to is ended too: its callers fail now, not at the pool's timeout.
 * - No loop of reads: a generation built from a read that never opened a connection does not read again (the
 *   secret itself is wrong); a read that found nothing new is not repeated for {@link REREAD_INTERVAL_MS} (the
 *   moment of a rotation between the database's new password and the secret's: AWS documents it, short).
 *   So one call reads the secret at most once, and a wrong secret costs one read per interval.
 * - {@link withCredentialRecovery} wraps each call of the stable handles: a call that failed because its
 *   connection was refused (or, on a marked generation, because none was handed out — it never ran) is run ONCE
 *   more on the newer generation; otherwise, or if that fails the same way, it throws
 *   {@link DatabaseCredentialsRejectedError} (a 503 for the API, an infrastructure redelivery for consumers).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import * as mariadb from 'mariadb';
import { refreshDatabaseUrl } from '../config/database-secret.ts';
import { EngineError } from '../errors.ts';
import { isAuthenticationFailure, isConnectionAcquisitionFailure } from './connection-errors.ts';
import { databaseUrlFromEnv, parseDatabaseUrl, poolOptions } from './database-url.ts';

/** After a read of the secret that found the same credentials, how long the process reads it no more. */
export const REREAD_INTERVAL_MS = 5_000;
/** Shortest time between two probes of a generation whose pool reports an error that may hide a 1045. */
export const PROBE_INTERVAL_MS = 2_000;

/** The database refused the credentials, also after the secret was read again (or there was nothing to read). */
export class DatabaseCredentialsRejectedError extends EngineError {
  readonly code = 'DATABASE_CREDENTIALS_REJECTED';
  override readonly retryable = true;
}

/** What a pool of a generation reports back. */
export interface PoolHooks {
  /** A connection could not be opened (the mariadb pool's `error` event). */
  onConnectionError(err: unknown): void;
  /** A connection was opened (the pool's `connection` event): the credentials work. */
  onConnected(): void;
}

/** A member's instance of one generation. */
export interface MemberInstance<T> {
  instance: T;
  /** Connections its pool has open, idle or in use. */
  connections(): number;
  /** Ends its pool at once: calls waiting for a connection are released with an error. */
  end(): Promise<void>;
}

export interface MemberSpec<T> {
  create(url: string, hooks: PoolHooks): MemberInstance<T>;
}

/** One process-wide member of every generation (Prisma's client, the raw pool). */
export interface SharedMember<T> {
  /** The current generation's instance, created on first use. */
  current(): T;
  /** Ends the current instance (tests, shutdown); the next use creates another (from DATABASE_URL once none is left). */
  close(): Promise<void>;
}

interface Generation {
  id: number;
  url: string;
  instances: Map<MemberState, MemberInstance<unknown>>;
  /** Built from a read of the secret made for recovery (not from DATABASE_URL as it stood). */
  fromReread: boolean;
  /** A connection was opened with its credentials. */
  proven: boolean;
  authFailed: boolean;
  retired: boolean;
  recovering?: Promise<Generation | undefined>;
  probing: boolean;
  lastProbe: number;
}

type MemberState = MemberSpec<unknown>;

let generation: Generation | undefined;
let generations = 0;
/** When a read of the secret last found the credentials unchanged. */
let lastFruitlessRead = -Infinity;
let logger: Logger | undefined;
const log = () => (logger ??= new Logger({ serviceName: 'ai-job-engine' }));

function newGeneration(url: string, fromReread: boolean): Generation {
  return { id: (generations += 1), url, instances: new Map(), fromReread, proven: false, authFailed: false, retired: false, probing: false, lastProbe: -Infinity };
}

function currentGeneration(): Generation {
  generation ??= newGeneration(databaseUrlFromEnv(), false);
  return generation;
}

/** Registers a member; its instances are built per generation through `spec`. */
export function sharedMember<T>(spec: MemberSpec<T>): SharedMember<T> {
  const key = spec as MemberState;
  return {
    current: () => {
      const g = currentGeneration();
      let made = g.instances.get(key);
      if (!made) {
        made = key.create(g.url, { onConnectionError: (err) => onConnectionError(g, err), onConnected: () => (g.proven = true) });
        g.instances.set(key, made);
      }
      return made.instance as T;
    },
    close: async () => {
      const g = generation;
      const made = g?.instances.get(key);
      if (!g || !made) return;
      g.instances.delete(key);
      if (g.instances.size === 0) generation = undefined;
      await made.end();
    },
  };
}

/**
 * Runs `call` (which uses the members' `current()`), and once more on a newer generation when it failed on the
 * credentials (see the module comment).
 * @throws DatabaseCredentialsRejectedError when the credentials are refused after the secret was read again
 */
export async function withCredentialRecovery<T>(call: () => Promise<T>, neverRan: (err: unknown) => boolean = isConnectionAcquisitionFailure): Promise<T> {
  const g = currentGeneration();
  try {
    return await call();
  } catch (err) {
    if (!failedOnCredentials(g, err, neverRan)) throw err;
    const next = await recover(g);
    if (!next) throw rejected(err);
    try {
      return await call();
    } catch (again) {
      throw failedOnCredentials(next, again, neverRan) ? rejected(again) : again;
    }
  }
}

function failedOnCredentials(g: Generation, err: unknown, neverRan: (err: unknown) => boolean): boolean {
  if (err instanceof DatabaseCredentialsRejectedError) return false;
  if (isAuthenticationFailure(err)) {
    markAuthFailed(g);
    return true;
  }
  return (g.authFailed || g.retired) && neverRan(err);
}

function rejected(cause: unknown): DatabaseCredentialsRejectedError {
  return new DatabaseCredentialsRejectedError('the database refused the credentials of its secret, also after reading the secret again', { cause });
}

function onConnectionError(g: Generation, err: unknown): void {
  if (g.retired || g.authFailed) return;
  if (isAuthenticationFailure(err)) markAuthFailed(g);
  else void probe(g);
}

/** Opens one connection with the generation's credentials: a 1045 marks it. */
async function probe(g: Generation): Promise<void> {
  if (g.probing || Date.now() - g.lastProbe < PROBE_INTERVAL_MS) return;
  g.probing = true;
  g.lastProbe = Date.now();
  try {
    const conn = await mariadb.createConnection(poolOptions(parseDatabaseUrl(g.url)));
    await conn.end().catch(() => undefined);
  } catch (err) {
    if (isAuthenticationFailure(err)) markAuthFailed(g);
  } finally {
    g.probing = false;
  }
}

function markAuthFailed(g: Generation): void {
  if (g.authFailed || g.retired) return;
  g.authFailed = true;
  log().warn('the database refused a new connection for its credentials; reading the database secret again', { generation: g.id });
  void recover(g).catch(() => undefined);
}

/**
 * The generation to retry on after `g` failed on its credentials, or undefined when there is none. Concurrent
 * callers share one recovery; whether the secret is read again: see the module comment.
 */
function recover(g: Generation): Promise<Generation | undefined> {
  g.recovering ??= (async () => {
    if (generation && generation !== g) return generation;
    // Retired: its recovery already read the secret, and found nothing to move to.
    if (g.retired) return undefined;
    const read = !(g.fromReread && !g.proven) && Date.now() - lastFruitlessRead >= REREAD_INTERVAL_MS;
    if (read) await refreshDatabaseUrl();
    const url = databaseUrlFromEnv();
    if (url !== g.url) return replace(g, url);
    if (read) lastFruitlessRead = Date.now();
    if (connectionsOf(g) === 0) retire(g);
    log().error('the database refuses the credentials of its secret', { generation: g.id, secretReadAgain: read });
    return undefined;
  })().finally(() => (g.recovering = undefined));
  return g.recovering;
}

function replace(g: Generation, url: string): Generation {
  const next = newGeneration(url, true);
  generation = next;
  retire(g);
  log().info('database credentials replaced from the secret; pools rebuilt', { generation: next.id, previous: g.id });
  return next;
}

/** Ends the generation's pools: calls waiting for one of their connections are released with an error. */
function retire(g: Generation): void {
  if (g.retired) return;
  g.retired = true;
  if (generation === g) generation = undefined;
  for (const made of g.instances.values()) void made.end().catch(() => undefined);
}

function connectionsOf(g: Generation): number {
  let n = 0;
  for (const made of g.instances.values()) n += made.connections();
  return n;
}
