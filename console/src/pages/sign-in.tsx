/**
 * Sign-in. Locally one click (the local runtime mints an admin token); on a deployed stage the OIDC
 * issuer's authorization code + PKCE flow in a pop-up (../oidc.ts).
 */
import { useRef, useState } from 'preact/hooks';
import { signInWithOidc } from '../oidc.ts';
import { loadConfig, setSession, signInLocally, type ConsoleConfig } from '../session.ts';
import { useLoad } from '../hooks.ts';
import { LoadStatus } from '../components/status.tsx';

export function SignInPage() {
  const config = useLoad<ConsoleConfig>(loadConfig, []);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const pending = useRef<AbortController | null>(null);
  const signIn = async (c: ConsoleConfig) => {
    setBusy(true);
    setError(undefined);
    try {
      if (c.signIn === 'local') await signInLocally(c);
      else if (!c.clientId) throw new Error('config.json names no OIDC client (deploy with -c consoleClientId=…)');
      else {
        pending.current = new AbortController();
        setSession(await signInWithOidc({ issuer: c.issuer, clientId: c.clientId, ...(c.scope ? { scope: c.scope } : {}) }, pending.current.signal));
      }
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  return (
    <section class="sign-in" aria-labelledby="sign-in-heading">
      <h1 id="sign-in-heading" tabIndex={-1}>AI jobs console</h1>
      <LoadStatus loading={config.loading} error={config.error} />
      {config.data?.signIn === 'local' && (
        <>
          <p>This is the local runtime: one click signs you in as a local admin.</p>
          <button type="button" class="primary" disabled={busy} onClick={() => config.data && signIn(config.data)}>Sign in as local admin</button>
        </>
      )}
      {config.data?.signIn === 'oidc' && (
        <>
          <p>Sign in with your organisation's account at <code>{new URL(config.data.issuer).host}</code>; it opens in a new window.</p>
          <button type="button" class="primary" disabled={busy} onClick={() => config.data && signIn(config.data)}>Sign in</button>
          {busy && <button type="button" onClick={() => pending.current?.abort()}>Cancel sign-in</button>}
        </>
      )}
      {error && <p role="alert" class="error">{error}</p>}
    </section>
  );
}
