/**
 * Job detail (`GET /admin-api/ai/jobs/{jobId}`): status, lineage, the transition timeline (actor, time,
 * reason, lease version), usage per attempt with the models each used (more than one = a fallback),
 * artifacts, the internal error, and the retry action with confirmation, linking the new job.
 */
import { useState } from 'preact/hooks';
import { api, RETRYABLE_STATES, unwrap, type AdminJobDetail } from '../api/client.ts';
import { ConfirmButton } from '../components/confirm.tsx';
import { NotAvailableYet } from '../components/placeholder.tsx';
import { LoadStatus, StateBadge } from '../components/status.tsx';
import { formatDuration, formatTime, formatUsd } from '../format.ts';
import { useLoad } from '../hooks.ts';

export function JobDetailPage({ jobId }: { jobId: string }) {
  const job = useLoad(async () => unwrap(await api.GET('/admin-api/ai/jobs/{jobId}', { params: { path: { jobId } } })), [jobId]);
  return (
    <>
      <h1 tabIndex={-1}>Job <code>{jobId}</code></h1>
      <LoadStatus loading={job.loading && !job.data} error={job.error} />
      {job.data && <Summary job={job.data} />}
      {job.data && <Retry job={job.data} />}
      {job.data && <Timeline job={job.data} />}
      {job.data && <Attempts job={job.data} />}
      {job.data && <Artifacts job={job.data} />}
      <NotAvailableYet title="Input snapshot (redacted)" waitsFor="the redacted input snapshot in the admin job view" />
      <NotAvailableYet title="Cancel" waitsFor="POST /admin-api/ai/jobs/{jobId}/cancel" />
    </>
  );
}

function Summary({ job }: { job: AdminJobDetail }) {
  const rows: [string, preact.ComponentChildren][] = [
    ['State', <StateBadge state={job.lifecycleStatus} />],
    ['Type', job.jobType], ['User', job.userId], ['Queue', job.queueName], ['Trigger', job.triggerType],
    ['Attempts', `${job.attemptCount} of ${job.maxAttempts}`], ['Credential', job.credentialMode],
    ['Model', job.modelProvider ? `${job.modelProvider}/${job.modelName ?? '?'}` : '—'],
    ['Created', formatTime(job.createdAt)], ['Started', formatTime(job.startedAt)], ['Finished', formatTime(job.finishedAt)],
    ['Run time', job.startedAt ? formatDuration(job.startedAt, job.finishedAt) : '—'],
    ['Retry of', job.parentJobId ? <a href={`/console/jobs/${job.parentJobId}`}>{job.parentJobId}</a> : '—'],
    ['Error', job.errorCode ? `${job.errorCode}: ${job.publicErrorMessage ?? ''}` : '—'],
    ['Internal error', job.internalErrorMessage ? <pre class="internal">{job.internalErrorMessage}</pre> : '—'],
  ];
  return (
    <section aria-labelledby="summary-heading">
      <h2 id="summary-heading">Summary</h2>
      <dl class="summary">{rows.map(([k, v]) => <div key={k}><dt>{k}</dt><dd>{v}</dd></div>)}</dl>
    </section>
  );
}

function Retry({ job }: { job: AdminJobDetail }) {
  const [result, setResult] = useState<{ jobId?: string; error?: string }>({});
  const retryable = RETRYABLE_STATES.includes(job.lifecycleStatus);
  const retry = async () => {
    try {
      const created = unwrap(await api.POST('/admin-api/ai/jobs/{jobId}/retry', { params: { path: { jobId: job.jobId } } }));
      setResult({ jobId: created.jobId });
    } catch (err) {
      setResult({ error: (err as Error).message });
    }
  };
  return (
    <section aria-labelledby="actions-heading">
      <h2 id="actions-heading">Actions</h2>
      <ConfirmButton label="Retry job" confirmLabel="Retry" disabled={!retryable} onConfirm={retry}
        question={<>Start a new job with this job's input snapshot? This job stays {job.lifecycleStatus}.</>} />
      {!retryable && <p class="hint">Only failed or cancelled jobs can be retried.</p>}
      <div role="status" aria-live="polite">
        {result.jobId && <p>Retried as <a href={`/console/jobs/${result.jobId}`} data-testid="retry-link">{result.jobId}</a>.</p>}
        {result.error && <p class="error">Retry refused: {result.error}</p>}
      </div>
    </section>
  );
}

function Timeline({ job }: { job: AdminJobDetail }) {
  return (
    <section aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Timeline</h2>
      <table>
        <caption>State transitions, oldest first</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Actor</th><th scope="col">Reason</th><th scope="col">Error</th><th scope="col">Lease version</th></tr></thead>
        <tbody>
          {job.transitions.map((t, i) => (
            <tr key={i}>
              <td>{formatTime(t.createdAt)}</td><td>{t.fromStatus ?? '—'}</td><td>{t.toStatus}</td><td>{t.actor}</td>
              <td>{t.reason ?? ''}</td><td>{t.errorCode ?? ''}</td><td>{t.leaseVersion ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Attempts({ job }: { job: AdminJobDetail }) {
  const { attempts, total } = job.usage;
  return (
    <section aria-labelledby="attempts-heading">
      <h2 id="attempts-heading">Attempts and usage</h2>
      <table>
        <caption>Provider calls per attempt; more than one model in an attempt means it fell back</caption>
        <thead><tr><th scope="col">Attempt</th><th scope="col">Provider/model</th><th scope="col">Calls</th><th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th><th scope="col">Cost</th></tr></thead>
        <tbody>
          {attempts.map((a) => (
            <tr key={a.attemptNo} class={a.models.length > 1 ? 'fallback' : undefined}>
              <th scope="row">{a.attemptNo}</th>
              <td>{a.models.join(' → ')}{a.models.length > 1 && <span class="flag"> (fallback)</span>}</td>
              <td>{a.calls}</td><td>{a.promptTokens}</td><td>{a.completionTokens}</td><td>{formatUsd(a.costUsd)}</td>
            </tr>
          ))}
          {attempts.length === 0 && <tr><td colSpan={6}>No provider calls recorded.</td></tr>}
        </tbody>
        <tfoot><tr><th scope="row">Total</th><td /><td>{total.calls}</td><td>{total.promptTokens}</td><td>{total.completionTokens}</td><td>{formatUsd(total.costUsd)}</td></tr></tfoot>
      </table>
      <NotAvailableYet id="attempt-latency" title="Latency and error per attempt" waitsFor="latency and error per attempt in the admin job view (the usage log has latencyMs)" />
    </section>
  );
}

function Artifacts({ job }: { job: AdminJobDetail }) {
  const artifacts = job.result?.artifacts ?? [];
  return (
    <section aria-labelledby="artifacts-heading">
      <h2 id="artifacts-heading">Artifacts</h2>
      {artifacts.length === 0 ? <p>None.</p> : (
        <ul>{artifacts.map((a) => <li key={a.artifactId}>{a.artifactType} <code>{a.artifactId}</code></li>)}</ul>
      )}
    </section>
  );
}
