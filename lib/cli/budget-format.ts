/** The budget views as text for a terminal: one line per model and per cap, use against each limit. */
import type { BudgetsResponse, ModelCapacity, SpendUseView } from '../api/budget-schemas.ts';

export type BudgetsView = BudgetsResponse;
export type SpendView = SpendUseView;

const n = (v: number) => v.toLocaleString('en-US');

/** `12.5` → `12.50`; 8-decimal USD shown to the cent, or to its first significant digits below a cent. */
function usd(v: string | null): string {
  if (v === null) return 'no cap';
  const x = Number(v);
  return x !== 0 && x < 0.01 ? `$${x.toPrecision(2)}` : `$${x.toFixed(2)}`;
}

const SCOPE_LABEL: Record<string, string> = { platform_day: 'platform today', job_type_day: 'today', user_day: 'today', user_month: 'this month' };

/** One cap: `label  $used of $cap (p%)  resets <when>`, flagged when reached. */
export function spendLine(s: SpendView, label = SCOPE_LABEL[s.scope] ?? s.scope): string {
  const share = s.capUsd && Number(s.capUsd) > 0 ? ` (${((100 * Number(s.usedUsd)) / Number(s.capUsd)).toFixed(1)}%)` : '';
  const source = s.capSource ? ` [${s.capSource}]` : '';
  return `  ${label.padEnd(34)} ${usd(s.usedUsd)} of ${usd(s.capUsd)}${share}${source}  resets ${s.resetsAt}${s.reached ? '  REACHED' : ''}`;
}

function modelLine(m: ModelCapacity): string {
  const w = m.window;
  const cooling = m.cooldownUntil ? `  COOLDOWN until ${m.cooldownUntil}` : '';
  const admitted = m.admittedPerMille < 1000 ? ` (admitting ${m.admittedPerMille / 10}% of its limits)` : '';
  return `  ${`${m.provider}/${m.model}`.padEnd(34)} requests ${n(w.requests)}/${n(w.rpm)}  tokens ${n(w.tokens)}/${n(w.tpm)}  in flight ${n(m.inFlight)}/${n(m.maxInFlight)}`
    + `  limits rpm ${n(m.rpm)} tpm ${n(m.tpm)} [${m.source}]${cooling}${admitted}`;
}

export function formatBudgets(b: BudgetsView): string {
  const cooling = b.models.filter((m) => m.cooldownUntil);
  const lines = [
    `Models (this minute's window, from ${b.models[0]?.window.start ?? '-'}):`,
    ...b.models.map(modelLine),
    `Cooldowns: ${cooling.length ? cooling.map((m) => `${m.provider}/${m.model} until ${m.cooldownUntil}`).join(', ') : 'none'}`,
    'Spend (UTC):',
    ...b.spend.map((s) => spendLine(s, s.scope === 'platform_day' ? 'platform today' : `${s.subject} today`)),
    `Cap defaults: ${b.caps.defaults.map((d) => `${d.scope} ${usd(d.capUsd)}${d.source ? ` [${d.source}]` : ''}`).join(', ')}`,
    `Cap overrides${b.caps.truncated ? ' (first 200)' : ''}: ${b.caps.overrides.length ? '' : 'none'}`,
    ...b.caps.overrides.map((o) => `  ${o.scope} ${o.subject} ${usd(o.capUsd)} (by ${o.updatedBy ?? '?'}, ${o.updatedAt})`),
  ];
  if (b.user) lines.push(`User ${b.user.userId}:`, ...b.user.spend.map((s) => spendLine(s)));
  return lines.join('\n');
}

export function formatSpend(spend: readonly SpendView[]): string {
  return ['Your spend (UTC):', ...spend.map((s) => spendLine(s))].join('\n');
}
