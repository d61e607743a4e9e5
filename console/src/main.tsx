/** Entry point: renders the console into #app, unless this window is the OIDC pop-up coming back (oidc.ts). */
import { render } from 'preact';
import { App } from './app.tsx';
import { relayOidcCallback } from './oidc.ts';
import './styles.css';

if (!relayOidcCallback()) render(<App />, document.getElementById('app')!);
