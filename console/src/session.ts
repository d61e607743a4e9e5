/**
 * The signed-in admin's token, held in memory only (never localStorage or cookies): a reload signs out.
 * How to sign in comes from `/console/config.json`, written by whoever serves the console: the local
 * runtime answers `{"signIn":"local"}` and mints a token at its local-only route; a deployed stage answers
 * `{"signIn":"oidc", ...}` (authorization code + PKCE in ./oidc.ts; see docs/console.md).
 */
import { useEffect, useState } from 'preact/hooks';

/** What `/console/config.json` says; `realtime`: the stage's (or local hub's) realtime push, when there is one. */
export type ConsoleConfig = (
  | { signIn: 'local'; apiBaseUrl?: string }
  | { signIn: 'oidc'; apiBaseUrl?: string; issuer: string; clientId: string | null; scope?: string }
) & { realtime?: { httpEndpoint: string } };

export interface Session {
  token: string;
  userId: string;
  expiresAt: string;
}

/** The local runtime's token route; it exists only there, never among the deployed API routes. */
export const LOCAL_TOKEN_PATH = '/local/console-token';

let current: Session | null = null;
const listeners = new Set<() => void>();

/** The current session, or null when signed out. */
export function currentSession(): Session | null {
  return current;
}

/** Replaces the session (null signs out) and re-renders every component using {@link useSession}. */
export function setSession(session: Session | null): void {
  current = session;
  for (const listener of listeners) listener();
}

/** The current session, re-rendering on sign-in and sign-out. */
export function useSession(): Session | null {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return current;
}

let loaded: Promise<ConsoleConfig> | undefined;

/** config.json, read once per page (a failed read is tried again next time). */
export function consoleConfig(): Promise<ConsoleConfig> {
  loaded ??= loadConfig().catch((err: unknown) => {
    loaded = undefined;
    throw err;
  });
  return loaded;
}

/** Reads `/console/config.json` (next to index.html). */
export async function loadConfig(): Promise<ConsoleConfig> {
  const res = await fetch(`${import.meta.env.BASE_URL}config.json`, { cache: 'no-store' });
  if (!res.ok) throw new Error(`config.json: HTTP ${res.status}`);
  return (await res.json()) as ConsoleConfig;
}

/** One-click local sign-in: asks the local runtime for an admin token. */
export async function signInLocally(config: ConsoleConfig): Promise<void> {
  const res = await fetch(`${config.apiBaseUrl ?? ''}${LOCAL_TOKEN_PATH}`, { method: 'POST' });
  if (!res.ok) throw new Error(`local sign-in failed: HTTP ${res.status}`);
  setSession((await res.json()) as Session);
}

