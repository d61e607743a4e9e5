/**
 * Sign-in. Locally one click (the local runtime mints an admin token); on a deployed stage the OIDC
 * issuer's authorization-code + PKCE flow (not built yet: see docs/console.md).
 */
import { useState } from 'preact/hooks';
import { loadConfig, signInLocally, type ConsoleConfig } from '../session.ts';
import { useLoad } from '../hooks.ts';
import { LoadStatus } from '../components/status.tsx';

export function SignInPage() {
  const config = useLoad<ConsoleConfig>(loadConfig, []);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const signIn = async (c: ConsoleConfig) => {
    setBusy(true);
    setError(undefined);
    try {
      await signInLocally(c);
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
        <p><strong>Not available yet.</strong> Sign-in through {config.data.issuer} (authorization code + PKCE) is not built yet.</p>
      )}
      {error && <p role="alert" class="error">{error}</p>}
    </section>
  );
}
