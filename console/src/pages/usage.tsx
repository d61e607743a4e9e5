/**
 * Usage: cost and tokens per UTC day as charts, with the totals as text beside them, and the same range broken
 * down by model, job type, credential mode and top users (`GET /admin-api/ai/usage` and `/usage/users`). The
 * range is in the URL (`?from=YYYY-MM-DD&to=YYYY-MM-DD`, at most 92 days; none = the API's last 7 days).
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, unwrap } from '../api/client.ts';
import { LoadStatus } from '../components/status.tsx';
import { TimeChart } from '../components/time-chart.tsx';
import { UsageTable } from '../components/usage-table.tsx';
import { formatCount, formatUsd } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { daySeconds, daysOf, groupRows, modelOf, perDay, shiftDay, sumRows, utcToday, type UsageReport } from '../usage.ts';

/** Users listed in the top-users table. */
export const TOP_USERS = 10;
/** Range presets, in days (today included). */
const PRESETS = [7, 30, 92] as const;

/** `/console/usage?…` for a range (empty = the default). */
export function usageUrl(range: { from?: string | undefined; to?: string | undefined }): string {
  const search = new URLSearchParams(Object.entries(range).filter((e): e is [string, string] => Boolean(e[1])));
  return `/console/usage${search.size ? `?${search}` : ''}`;
}

/** The first day of an n-day range ending today (UTC). */
const presetFrom = (days: number) => shiftDay(utcToday(), -(days - 1));

export function UsagePage() {
  const { query, route } = useLocation();
  const range = { from: query.from || undefined, to: query.to || undefined };
  const key = JSON.stringify(range);
  const report = useLoad(async () => {
    const [all, users] = await Promise.all([
      api.GET('/admin-api/ai/usage', { params: { query: range } }),
      api.GET('/admin-api/ai/usage/users', { params: { query: { ...range, limit: TOP_USERS } } }),
    ]);
    return { all: unwrap(all), users: unwrap(users) };
  }, [key]);
  return (
    <>
      <h1 tabIndex={-1}>Usage</h1>
      <RangeForm key={key} from={range.from} to={range.to} onApply={(r) => route(usageUrl(r))} />
      <LoadStatus loading={report.loading} error={report.error}>
        {report.data && <>UTC days {report.data.all.from} to {report.data.all.to}</>}
      </LoadStatus>
      {report.data && <UsageCharts report={report.data.all} />}
      {report.data && <Breakdowns report={report.data.all} users={report.data.users} />}
    </>
  );
}

function RangeForm(p: { from: string | undefined; to: string | undefined; onApply(r: { from?: string; to?: string }): void }) {
  const [from, setFrom] = useState(p.from ?? '');
  const [to, setTo] = useState(p.to ?? '');
  return (
    <form class="filters" aria-label="Usage range" onSubmit={(e) => { e.preventDefault(); p.onApply({ from, to }); }}>
      <label>From (UTC day) <input type="date" name="from" value={from} onInput={(e) => setFrom(e.currentTarget.value)} /></label>
      <label>To (UTC day, inclusive) <input type="date" name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} /></label>
      <button type="submit" class="primary">Show range</button>
      <span>Last: {PRESETS.map((n) => <a key={n} class="preset" href={usageUrl({ from: presetFrom(n) })}>{n} days</a>)}</span>
    </form>
  );
}

function UsageCharts({ report }: { report: UsageReport }) {
  const days = daysOf(report.from, report.to);
  const times = days.map(daySeconds);
  const t = report.total;
  return (
    <section aria-labelledby="per-day-heading">
      <h2 id="per-day-heading">Per day</h2>
      <p class="totals" data-testid="usage-totals">
        Total <strong data-total="cost">{formatUsd(t.costUsd)}</strong> ({t.costUsd} USD),{' '}
        <strong data-total="tokens">{formatCount(t.totalTokens)}</strong> tokens (prompt <span data-total="prompt">{formatCount(t.promptTokens)}</span>,
        completion <span data-total="completion">{formatCount(t.completionTokens)}</span>) in <span data-total="calls">{formatCount(t.calls)}</span> calls
      </p>
      <div class="charts">
        <TimeChart label="Cost per day (USD)" unit="day" bars times={times} leftAxis="USD" testId="cost-chart"
          series={[{ label: 'Cost', color: '#2563eb', values: perDay(report.rows, days, (s) => Number(s.costUsd)) }]} />
        <TimeChart label="Tokens per day" unit="day" bars times={times} leftAxis="tokens" testId="tokens-chart"
          series={[
            { label: 'Prompt tokens', color: '#9a6700', values: perDay(report.rows, days, (s) => s.promptTokens) },
            { label: 'Completion tokens', color: '#1a7f37', values: perDay(report.rows, days, (s) => s.completionTokens) },
          ]} />
      </div>
      <ModelChart report={report} days={days} times={times} />
      <UsageTable caption="Per day" groupLabel="Day (UTC)" groups={groupRows(report.rows, (r) => r.day).sort((a, b) => a.key.localeCompare(b.key))}
        total={t} testId="usage-per-day" />
    </section>
  );
}

/** Models drawn one line each in the per-model chart; the rest are summed as "other". */
const CHART_MODELS = 5;
const MODEL_COLORS = ['#2563eb', '#cf222e', '#1a7f37', '#9a6700', '#8250df', '#6e7781'];

function ModelChart({ report, days, times }: { report: UsageReport; days: string[]; times: number[] }) {
  const models = groupRows(report.rows, modelOf).map((g) => g.key);
  if (models.length === 0) return null;
  const shown = models.slice(0, CHART_MODELS);
  const rest = report.rows.filter((r) => !shown.includes(modelOf(r)));
  const series = [
    ...shown.map((m, i) => ({ label: m, color: MODEL_COLORS[i]!, values: perDay(report.rows.filter((r) => modelOf(r) === m), days, (s) => Number(s.costUsd)) })),
    ...(rest.length ? [{ label: `other (${models.length - shown.length} models)`, color: MODEL_COLORS[CHART_MODELS]!, values: perDay(rest, days, (s) => Number(s.costUsd)) }] : []),
  ];
  return <TimeChart label="Cost per day by model (USD)" unit="day" times={times} leftAxis="USD" testId="model-chart" series={series} />;
}

function Breakdowns({ report, users }: { report: UsageReport; users: UsageReport }) {
  // The API lists the TOP_USERS users with the highest cost, and says how many had any.
  const top = groupRows(users.rows, (r) => r.userId ?? '?');
  const userCount = users.userCount ?? top.length;
  return (
    <section aria-labelledby="breakdown-heading">
      <h2 id="breakdown-heading">Breakdown</h2>
      <UsageTable caption="By model" groupLabel="Model" groups={groupRows(report.rows, modelOf)} total={sumRows(report.rows)} testId="usage-by-model" />
      <UsageTable caption="By job type" groupLabel="Job type" groups={groupRows(report.rows, (r) => r.jobType)} total={report.total} testId="usage-by-type" />
      <UsageTable caption="By credential mode" groupLabel="Credential mode" groups={groupRows(report.rows, (r) => r.credentialMode)} total={report.total} testId="usage-by-credential" />
      <UsageTable caption={`Top ${TOP_USERS} users by cost${userCount > TOP_USERS ? ` (of ${userCount})` : ''}`} groupLabel="User"
        groups={top.slice(0, TOP_USERS)} testId="usage-top-users" />
    </section>
  );
}
