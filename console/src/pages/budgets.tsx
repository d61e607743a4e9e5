/**
 * Budgets: spend against the spending caps as bars (the platform's and each job type's day; a looked-up user's
 * day and month), the models in cooldown and until when, each model's use of its minute window, and a form to
 * change a user's cap (or reset it to the default) after confirmation. `GET /admin-api/ai/budgets`, every 5 s
 * while visible; the user looked up is in the URL (`?user=`). docs/budgets.md.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, unwrap } from '../api/client.ts';
import type { components } from '../api/schema';
import { ConfirmButton } from '../components/confirm.tsx';
import { LoadStatus } from '../components/status.tsx';
import { formatCount, formatTime, formatUsd } from '../format.ts';
import { useLoad } from '../hooks.ts';

type SpendUse = components['schemas']['SpendUse'];
type ModelCapacity = components['schemas']['ModelCapacity'];

const PERIOD: Record<string, string> = { user_day: 'daily', user_month: 'monthly' };

/** A use against a limit as a bar (a native meter: its value, bounds and label reach assistive technology). */
function Bar(p: { label: string; value: number; max: number | null }) {
  const max = p.max && p.max > 0 ? p.max : 1;
  return <meter aria-label={p.label} min={0} max={max} low={max * 0.5} high={max * 0.8} optimum={0} value={Math.min(p.value, max)} />;
}

function SpendTable({ caption, rows, label, testId }: { caption: string; rows: readonly SpendUse[]; label(s: SpendUse): string; testId: string }) {
  return (
    <table data-testid={testId}>
      <caption>{caption}</caption>
      <thead><tr><th scope="col">Cap</th><th scope="col">Use</th><th scope="col">Spent</th><th scope="col">Cap (USD)</th><th scope="col">Resets</th></tr></thead>
      <tbody>
        {rows.map((s) => (
          <tr key={`${s.scope}/${s.subject}`} data-scope={s.scope} data-subject={s.subject} class={s.reached ? 'unhealthy' : undefined}>
            <th scope="row">{label(s)}</th>
            <td><Bar label={`${label(s)}: ${formatUsd(s.usedUsd)} of ${s.capUsd ? formatUsd(s.capUsd) : 'no cap'}`} value={Number(s.usedUsd)} max={s.capUsd ? Number(s.capUsd) : null} /></td>
            <td class="num" data-col="used" data-usd={s.usedUsd}>{formatUsd(s.usedUsd)}{s.reached ? ' (reached)' : ''}</td>
            <td class="num" data-col="cap" data-usd={s.capUsd ?? ''}>{s.capUsd ? formatUsd(s.capUsd) : 'none'}{s.capSource ? ` (${s.capSource})` : ''}</td>
            <td>{formatTime(s.resetsAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Models({ models }: { models: readonly ModelCapacity[] }) {
  const cooling = models.filter((m) => m.cooldownUntil);
  return (
    <section aria-labelledby="models-heading">
      <h2 id="models-heading">Models</h2>
      <p data-testid="cooldowns">{cooling.length === 0 ? 'No model is in cooldown.' : cooling.map((m) => (
        <span key={m.model} class="flag unhealthy">{m.provider}/{m.model} in cooldown until {formatTime(m.cooldownUntil)} </span>
      ))}</p>
      <table data-testid="models">
        <caption>Each model's minute window ({models[0] ? formatTime(models[0].window.start) : '—'}), calls in flight and limits</caption>
        <thead><tr><th scope="col">Model</th><th scope="col">Requests this minute</th><th scope="col">Tokens this minute</th><th scope="col">In flight</th><th scope="col">Limits (RPM / TPM)</th><th scope="col">Cooldown</th></tr></thead>
        <tbody>
          {models.map((m) => {
            const key = `${m.provider}/${m.model}`;
            return (
              <tr key={key} data-model={key}>
                <th scope="row">{key}</th>
                <td><Bar label={`${key} requests`} value={m.window.requests} max={m.window.rpm} /> {formatCount(m.window.requests)} / {formatCount(m.window.rpm)}</td>
                <td><Bar label={`${key} tokens`} value={m.window.tokens} max={m.window.tpm} /> {formatCount(m.window.tokens)} / {formatCount(m.window.tpm)}</td>
                <td class="num">{formatCount(m.inFlight)} / {formatCount(m.maxInFlight)}</td>
                <td class="num">{formatCount(m.rpm)} / {formatCount(m.tpm)} ({m.source})</td>
                <td data-col="cooldown">{m.cooldownUntil ? `until ${formatTime(m.cooldownUntil)}` : m.admittedPerMille < 1000 ? 'recovering' : 'none'}
                  {m.admittedPerMille < 1000 ? `, admitting ${m.admittedPerMille / 10}%` : ''}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

/** Change or reset one user's cap, each after confirmation; `done` reloads the page's data. */
function CapForm({ userId, done }: { userId: string; done(): void }) {
  const [scope, setScope] = useState('user_day');
  const [usd, setUsd] = useState('');
  const [result, setResult] = useState('');
  const run = async (what: string, call: () => Promise<{ response: Response; error?: unknown; data?: unknown }>) => {
    try {
      unwrap(await call());
      setResult(what);
    } catch (err) {
      setResult(`Refused: ${(err as Error).message}`);
    }
    done();
  };
  const period = PERIOD[scope];
  return (
    <form class="filters" aria-label={`Change ${userId}'s cap`} onSubmit={(e) => e.preventDefault()}>
      <label>Period <select name="scope" value={scope} onChange={(e) => setScope(e.currentTarget.value)}>
        <option value="user_day">Daily</option><option value="user_month">Monthly</option>
      </select></label>
      <label>New cap (USD) <input name="capUsd" inputMode="decimal" value={usd} onInput={(e) => setUsd(e.currentTarget.value.trim())} /></label>
      <ConfirmButton label="Change cap" confirmLabel="Change cap" disabled={usd === ''}
        question={`Set ${userId}'s ${period} cap to $${usd}? It applies at once: new jobs over it are refused; running jobs go on.`}
        onConfirm={() => run(`${userId}'s ${period} cap is now $${usd}.`, () => api.PUT('/admin-api/ai/budgets/caps', { body: { scope: scope as 'user_day', subject: userId, capUsd: usd } }))} />
      <ConfirmButton label="Reset to default" confirmLabel="Reset to default"
        question={`Remove ${userId}'s own ${period} cap? The default applies again.`}
        onConfirm={() => run(`${userId}'s ${period} cap is the default again.`, () => api.DELETE('/admin-api/ai/budgets/caps', { params: { query: { scope: scope as 'user_day', subject: userId } } }))} />
      <span role="status" data-testid="cap-result">{result}</span>
    </form>
  );
}

export function BudgetsPage() {
  const { query, route } = useLocation();
  const user = query.user || undefined;
  const [lookup, setLookup] = useState(user ?? '');
  const data = useLoad(async () => unwrap(await api.GET('/admin-api/ai/budgets', { params: { query: user ? { userId: user } : {} } })), [user], 5_000);
  const b = data.data;
  return (
    <>
      <h1 tabIndex={-1}>Budgets</h1>
      <LoadStatus loading={data.loading && !b} error={data.error}>{b && <>As of {formatTime(b.generatedAt)}</>}</LoadStatus>
      {b && <SpendTable caption="Spend today against the caps (UTC day)" rows={b.spend} testId="spend-today"
        label={(s) => (s.scope === 'platform_day' ? 'Platform' : s.subject)} />}
      {b && <Models models={b.models} />}
      <section aria-labelledby="user-heading">
        <h2 id="user-heading">A user's spend and caps</h2>
        <form class="filters" aria-label="Look up a user" onSubmit={(e) => { e.preventDefault(); route(`/console/budgets${lookup ? `?user=${encodeURIComponent(lookup)}` : ''}`); }}>
          <label>User id <input name="user" value={lookup} onInput={(e) => setLookup(e.currentTarget.value.trim())} /></label>
          <button type="submit" class="primary">Look up</button>
        </form>
        {b?.user && <>
          <SpendTable caption={`${b.user.userId}: today and this month`} rows={b.user.spend} testId="user-spend"
            label={(s) => (s.scope === 'user_day' ? 'Today' : 'This month')} />
          <CapForm userId={b.user.userId} done={data.reload} />
        </>}
      </section>
    </>
  );
}
