/**
 * Overview: open jobs by state and type, finished jobs per window with the failure rate and per hour as a
 * chart, queue and DLQ depths and the outbox backlog (each flagged when unhealthy), from
 * `GET /admin-api/ai/stats`, refreshed every few seconds while the tab is visible; spend by model today and
 * over 7 days from `GET /admin-api/ai/usage`, refreshed less often.
 */
import { api, JOB_STATES, unwrap, type StatsResponse } from '../api/client.ts';
import { FinishedJobs } from '../components/finished-jobs.tsx';
import { Spend } from '../components/spend.tsx';
import { LoadStatus } from '../components/status.tsx';
import { formatTime } from '../format.ts';
import { useLoad } from '../hooks.ts';

/** How often the page asks for fresh stats. */
export const OVERVIEW_REFRESH_MS = 5_000;
/** How often the page asks for fresh spend (the usage report reads more than the stats). */
export const SPEND_REFRESH_MS = 30_000;
/** Outbox rows waiting to be sent above which the backlog is flagged. */
export const OUTBOX_BACKLOG_LIMIT = 100;

const OPEN_STATES = ['queued', 'running'] as const;

export function OverviewPage() {
  const stats = useLoad(async () => unwrap(await api.GET('/admin-api/ai/stats')), [], OVERVIEW_REFRESH_MS);
  const spend = useLoad(async () => unwrap(await api.GET('/admin-api/ai/usage')), [], SPEND_REFRESH_MS);
  return (
    <>
      <h1 tabIndex={-1}>Overview</h1>
      <LoadStatus loading={stats.loading && !stats.data} error={stats.error}>
        Updated {formatTime(stats.data?.generatedAt)}; refreshes every {OVERVIEW_REFRESH_MS / 1000} s.
      </LoadStatus>
      {stats.data && <JobCounts stats={stats.data} />}
      {stats.data && <FinishedJobs finished={stats.data.jobs.finished} />}
      {stats.data && <Queues stats={stats.data} />}
      {stats.data && <Outbox stats={stats.data} />}
      {spend.error && <LoadStatus loading={false} error={spend.error} />}
      {spend.data && <Spend report={spend.data} />}
    </>
  );
}

function JobCounts({ stats }: { stats: StatsResponse }) {
  const types = Object.keys(stats.jobs.byType).sort();
  return (
    <section aria-labelledby="jobs-heading">
      <h2 id="jobs-heading">Jobs by state</h2>
      <dl class="tiles" data-testid="jobs-by-state">
        {JOB_STATES.map((s) => (
          <div key={s} class={OPEN_STATES.includes(s as (typeof OPEN_STATES)[number]) ? 'tile open' : 'tile'}>
            <dt>{s}</dt><dd data-state={s}>{stats.jobs.byStatus[s] ?? 0}</dd>
          </div>
        ))}
      </dl>
      <table>
        <caption>Open jobs by type</caption>
        <thead><tr><th scope="col">Type</th>{OPEN_STATES.map((s) => <th key={s} scope="col">{s}</th>)}</tr></thead>
        <tbody>
          {types.map((t) => (
            <tr key={t} data-job-type={t}>
              <th scope="row">{t}</th>
              {OPEN_STATES.map((s) => <td key={s} data-state={s}>{stats.jobs.byType[t]?.[s] ?? 0}</td>)}
            </tr>
          ))}
          {types.length === 0 && <tr><td colSpan={3}>No jobs yet.</td></tr>}
        </tbody>
      </table>
    </section>
  );
}

const depth = (n: number | null) => (n === null ? 'unknown' : String(n));

function Queues({ stats }: { stats: StatsResponse }) {
  return (
    <section aria-labelledby="queues-heading">
      <h2 id="queues-heading">Queues</h2>
      <table>
        <caption>Approximate depths (SQS)</caption>
        <thead><tr><th scope="col">Queue</th><th scope="col">Visible</th><th scope="col">In flight</th><th scope="col">Dead-letter queue (all messages)</th></tr></thead>
        <tbody>
          {stats.queues.map((q) => {
            // Visible or hidden (the reaper hides the messages it has handled), a dead letter needs a look.
            const { approximateMessages: visible, approximateMessagesNotVisible: hidden } = q.deadLetterQueue;
            const dlq = visible === null && hidden === null ? null : (visible ?? 0) + (hidden ?? 0);
            const dlqUnhealthy = q.unavailable || (dlq ?? 0) > 0;
            return (
              <tr key={q.queueName} data-queue={q.queueName}>
                <th scope="row">{q.queueName}{q.unavailable && <span class="flag"> (SQS unavailable)</span>}</th>
                <td>{depth(q.queue.approximateMessages)}</td>
                <td>{depth(q.queue.approximateMessagesNotVisible)}</td>
                <td class={dlqUnhealthy ? 'unhealthy' : 'healthy'} data-testid={`dlq-${q.queueName}`}>
                  {depth(dlq)}{dlqUnhealthy && <span class="flag"> — needs attention</span>}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

function Outbox({ stats }: { stats: StatsResponse }) {
  const s = stats.outbox.byStatus;
  const backlog = (s.pending ?? 0) + (s.processing ?? 0) + (s.failed ?? 0);
  const unhealthy = backlog > OUTBOX_BACKLOG_LIMIT || (s.dead ?? 0) > 0;
  return (
    <section aria-labelledby="outbox-heading">
      <h2 id="outbox-heading">Outbox</h2>
      <p class={unhealthy ? 'unhealthy' : 'healthy'} data-testid="outbox-backlog">
        Backlog: <strong>{backlog}</strong> (pending {s.pending ?? 0}, processing {s.processing ?? 0}, failed {s.failed ?? 0}); dead {s.dead ?? 0}
        {unhealthy && <span class="flag"> — needs attention</span>}
      </p>
    </section>
  );
}
