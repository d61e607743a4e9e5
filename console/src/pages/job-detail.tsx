/**
 * Job detail (`GET /admin-api/ai/jobs/{jobId}`): status, lineage, the transition timeline (actor, time,
 * reason, lease version), usage per attempt with the models each used (more than one = a fallback), latency
 * and errors, the redacted input snapshot, artifacts and business rows, the internal error, and the retry and
 * cancel actions with confirmation (retry links the new job), and why a parked job waits (docs/budgets.md). An open job's page follows it live: its output as
 * the model writes it and a reload of the job on each status change (../components/live-output.tsx).
 */
import { useState } from 'preact/hooks';
import { api, RETRYABLE_STATES, unwrap, type AdminJobDetail } from '../api/client.ts';
import { ConfirmButton } from '../components/confirm.tsx';
import { BusinessRows, CancelJob, CANCELLABLE_STATES, InputSnapshot } from '../components/job-extras.tsx';
import { LiveOutput } from '../components/live-output.tsx';
import { LoadStatus, StateBadge } from '../components/status.tsx';
import { formatCount, formatDuration, formatTime, formatUsd } from '../format.ts';
import { useLoad } from '../hooks.ts';

export function JobDetailPage({ jobId }: { jobId: string }) {
  // Per job: whether it was open when its page first loaded it; then the page follows it live to its end.
  const [openAtLoad, setOpenAtLoad] = useState<Record<string, boolean>>({});
  const job = useLoad(async () => {
    const view = unwrap(await api.GET('/admin-api/ai/jobs/{jobId}', { params: { path: { jobId } } }));
    setOpenAtLoad((seen) => (jobId in seen ? seen : { ...seen, [jobId]: CANCELLABLE_STATES.includes(view.lifecycleStatus) }));
    return view;
  }, [jobId]);
  const live = openAtLoad[jobId] === true && job.data?.jobId === jobId;
  return (
    <>
      <h1 tabIndex={-1}>Job <code>{jobId}</code></h1>
      <LoadStatus loading={job.loading && !job.data} error={job.error} />
      {job.data && <Summary job={job.data} />}
      {job.data && <Actions job={job.data} reload={job.reload} />}
      {job.data && live && <LiveOutput job={job.data} onStatus={job.reload} />}
      {job.data && <Timeline job={job.data} />}
      {job.data && <Attempts job={job.data} />}
      {job.data && <InputSnapshot job={job.data} />}
      {job.data && <BusinessRows job={job.data} />}
    </>
  );
}

function Summary({ job }: { job: AdminJobDetail }) {
  const rows: [string, preact.ComponentChildren][] = [
    ['State', <StateBadge state={job.lifecycleStatus} />],
    ['Type', job.jobType], ['User', job.userId], ['Queue', job.queueName], ['Trigger', job.triggerType],
    ['Attempts', `${job.attemptCount} of ${job.maxAttempts}`], ['Credential', job.credentialMode],
    ['Waiting for', job.waitingFor ? `${job.waitingFor.reason.replace('_', ' ')} until ${formatTime(job.waitingFor.until)} (since ${formatTime(job.waitingFor.since)}; no attempt spent)` : '—'],
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

function Actions({ job, reload }: { job: AdminJobDetail; reload(): void }) {
  return (
    <section aria-labelledby="actions-heading">
      <h2 id="actions-heading">Actions</h2>
      <div class="bulk"><Retry job={job} /><CancelJob job={job} onDone={reload} /></div>
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
    <div>
      <ConfirmButton label="Retry job" confirmLabel="Retry" disabled={!retryable} onConfirm={retry}
        question={<>Start a new job with this job's input snapshot? This job stays {job.lifecycleStatus}.</>} />
      {!retryable && <p class="hint">Only failed or cancelled jobs can be retried.</p>}
      <div role="status" aria-live="polite">
        {result.jobId && <p>Retried as <a href={`/console/jobs/${result.jobId}`} data-testid="retry-link">{result.jobId}</a>.</p>}
        {result.error && <p class="error">Retry refused: {result.error}</p>}
      </div>
    </div>
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
        <thead><tr><th scope="col">Attempt</th><th scope="col">Provider/model</th><th scope="col">Calls</th><th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th><th scope="col">Cost</th><th scope="col">Latency</th><th scope="col">Errors</th></tr></thead>
        <tbody>
          {attempts.map((a) => (
            <tr key={a.attemptNo} class={a.models.length > 1 ? 'fallback' : undefined} data-attempt={a.attemptNo}>
              <th scope="row">{a.attemptNo}</th>
              <td>{a.models.join(' → ')}{a.models.length > 1 && <span class="flag"> (fallback)</span>}</td>
              <td class="num">{a.calls}</td><td class="num">{a.promptTokens}</td><td class="num">{a.completionTokens}</td><td class="num">{formatUsd(a.costUsd)}</td>
              <td class="num" data-col="latency">{formatCount(a.latencyMs)} ms</td>
              <td data-col="errors">{a.errorCodes.length ? a.errorCodes.join(', ') : '—'}</td>
            </tr>
          ))}
          {attempts.length === 0 && <tr><td colSpan={8}>No provider calls recorded.</td></tr>}
        </tbody>
        <tfoot><tr><th scope="row">Total</th><td /><td class="num">{total.calls}</td><td class="num">{total.promptTokens}</td><td class="num">{total.completionTokens}</td><td class="num">{formatUsd(total.costUsd)}</td><td /><td /></tr></tfoot>
      </table>
    </section>
  );
}
