/**
 * Stuck or overdue jobs as the reaper sees them (`GET /admin-api/ai/reaper/report`, read-only). They are
 * open, so they cannot be retried: the reaper re-enqueues them or fails them (then they can be retried
 * here, among the failed ones), and each can be cancelled from its page.
 */
import type { components } from '../api/schema';
import { formatDuration, formatTime } from '../format.ts';
import { StateBadge } from './status.tsx';

type ReaperReport = components['schemas']['ReaperReport'];

const KIND_LABELS: Record<ReaperReport['items'][number]['kind'], string> = {
  expired_lease: 'Lease expired (consumer gone)',
  overdue_retry: 'Retry overdue',
  queued_not_picked_up: 'Queued, not picked up',
};

const seconds = (ms: number) => `${ms / 1000} s`;

export function StuckJobs({ report }: { report: ReaperReport }) {
  const b = report.bounds;
  return (
    <section aria-labelledby="stuck-heading">
      <h2 id="stuck-heading">Stuck and overdue jobs</h2>
      <p>
        What the reaper's next run acts on (bounds: lease grace {seconds(b.graceMs)}, retry overdue after {seconds(b.overdueRetryMs)},
        queued longer than {Object.entries(b.queuedBoundMs).map(([q, ms]) => `${seconds(ms)} on ${q}`).join(', ')}). Open jobs cannot be
        retried: the reaper re-enqueues or fails them; cancel one from its page.
      </p>
      <table data-testid="stuck-jobs">
        <caption>Stuck or overdue jobs (at most {report.limitPerKind} per kind), as of {formatTime(report.generatedAt)}</caption>
        <thead><tr><th scope="col">Job</th><th scope="col">Why</th><th scope="col">Since</th><th scope="col">State</th><th scope="col">Type</th><th scope="col">User</th><th scope="col">Attempts</th></tr></thead>
        <tbody>
          {report.items.map(({ kind, since, job }) => (
            <tr key={`${kind}:${job.jobId}`} data-job-id={job.jobId} data-kind={kind}>
              <th scope="row"><a href={`/console/jobs/${job.jobId}`}>{job.jobId}</a></th>
              <td>{KIND_LABELS[kind]}</td>
              <td>{formatTime(since)} ({formatDuration(since, report.generatedAt)} before)</td>
              <td><StateBadge state={job.lifecycleStatus} /></td><td>{job.jobType}</td><td>{job.userId}</td>
              <td>{job.attemptCount}/{job.maxAttempts}</td>
            </tr>
          ))}
          {report.items.length === 0 && <tr><td colSpan={7}>Nothing stuck.</td></tr>}
        </tbody>
      </table>
    </section>
  );
}
