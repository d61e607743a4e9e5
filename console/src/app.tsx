/**
 * The console shell: sign-in gate, navigation and routes (preact-iso; every path under /console/, so a
 * filtered view is a URL that can be bookmarked). On each route change focus moves to the page heading,
 * so keyboard and screen-reader users land on the new page.
 */
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { setSession, useSession } from './session.ts';
import { JobDetailPage } from './pages/job-detail.tsx';
import { JobsPage } from './pages/jobs.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { TroublePage } from './pages/trouble.tsx';
import { UsagePage } from './pages/usage.tsx';
import { BudgetsPage } from './pages/budgets.tsx';

const NAV = [
  { href: '/console/', label: 'Overview' },
  { href: '/console/jobs', label: 'Jobs' },
  { href: '/console/trouble', label: 'Trouble' },
  { href: '/console/usage', label: 'Usage' },
  { href: '/console/budgets', label: 'Budgets' },
];

function focusHeading(): void {
  requestAnimationFrame(() => document.querySelector<HTMLElement>('main h1')?.focus());
}

function Nav() {
  const { path } = useLocation();
  const session = useSession();
  const current = (href: string) => (href === '/console/' ? path === '/console/' || path === '/console' : path.startsWith(href));
  return (
    <header>
      <a class="skip" href="#main">Skip to content</a>
      <nav aria-label="Console">
        <span class="brand">AI jobs</span>
        <ul>
          {NAV.map((n) => <li key={n.href}><a href={n.href} aria-current={current(n.href) ? 'page' : undefined}>{n.label}</a></li>)}
        </ul>
        <span class="who">Signed in as {session?.userId}</span>
        <button type="button" onClick={() => setSession(null)}>Sign out</button>
      </nav>
    </header>
  );
}

function NotFound() {
  return <><h1 tabIndex={-1}>Not found</h1><p><a href="/console/">Back to the overview</a></p></>;
}

/** The whole console. */
export function App() {
  const session = useSession();
  if (!session) return <main id="main"><SignInPage /></main>;
  return (
    <LocationProvider scope="/console">
      <Nav />
      <main id="main">
        <Router onRouteChange={focusHeading}>
          <Route path="/console" component={OverviewPage} />
          <Route path="/console/" component={OverviewPage} />
          <Route path="/console/jobs" component={JobsPage} />
          <Route path="/console/jobs/:jobId" component={JobDetailPage} />
          <Route path="/console/trouble" component={TroublePage} />
          <Route path="/console/usage" component={UsagePage} />
          <Route path="/console/budgets" component={BudgetsPage} />
          <Route default component={NotFound} />
        </Router>
      </main>
    </LocationProvider>
  );
}
