/**
 * Trouble: stuck or overdue open jobs as the reaper reports them, and failed jobs whose error code says the
 * platform, not the model, let them down (dead-lettered, never dispatched, lease expired, internal), newest
 * first per code, with bulk retry after confirmation. Retries run one after another; each result links the new job.
 */
import { useState } from 'preact/hooks';
import { api, unwrap, type AdminJobSummary } from '../api/client.ts';
import { ConfirmButton } from '../components/confirm.tsx';
import { JobTable } from '../components/job-table.tsx';
import { StuckJobs } from '../components/stuck-jobs.tsx';
import { LoadStatus } from '../components/status.tsx';
import { useLoad } from '../hooks.ts';
import { jobsUrl } from './jobs.tsx';

/** Error codes that put a failed job on this page. */
export const TROUBLE_CODES = ['DEAD_LETTERED', 'DISPATCH_FAILED', 'LEASE_EXPIRED', 'INTERNAL'] as const;
const PER_CODE = 100;

type RetryOutcome = { jobId: string; newJobId?: string; error?: string };

async function loadTrouble(): Promise<Record<string, AdminJobSummary[]>> {
  const pages = await Promise.all(TROUBLE_CODES.map(async (errorCode) =>
    unwrap(await api.GET('/admin-api/ai/jobs', { params: { query: { status: 'failed', errorCode, limit: PER_CODE } } }))));
  return Object.fromEntries(TROUBLE_CODES.map((code, i) => [code, pages[i]?.items ?? []]));
}

async function retryAll(jobIds: readonly string[]): Promise<RetryOutcome[]> {
  const outcomes: RetryOutcome[] = [];
  for (const jobId of jobIds) {
    try {
      const created = unwrap(await api.POST('/admin-api/ai/jobs/{jobId}/retry', { params: { path: { jobId } } }));
      outcomes.push({ jobId, newJobId: created.jobId });
    } catch (err) {
      outcomes.push({ jobId, error: (err as Error).message });
    }
  }
  return outcomes;
}

export function TroublePage() {
  const trouble = useLoad(loadTrouble, []);
  const stuck = useLoad(async () => unwrap(await api.GET('/admin-api/ai/reaper/report')), [trouble.loadedAt]);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [outcomes, setOutcomes] = useState<RetryOutcome[]>([]);
  const [busy, setBusy] = useState(false);
  const toggle = (jobId: string) => setSelected((s) => {
    const next = new Set(s);
    if (!next.delete(jobId)) next.add(jobId);
    return next;
  });
  const all = Object.values(trouble.data ?? {}).flat();
  const retry = async () => {
    setBusy(true);
    setOutcomes(await retryAll([...selected]));
    setSelected(new Set());
    setBusy(false);
    trouble.reload();
  };
  return (
    <>
      <h1 tabIndex={-1}>Trouble</h1>
      <LoadStatus loading={stuck.loading && !stuck.data} error={stuck.error} />
      {stuck.data && <StuckJobs report={stuck.data} />}
      <h2>Failed for the platform's reasons</h2>
      <LoadStatus loading={trouble.loading} error={trouble.error}>{all.length} failed jobs need a look</LoadStatus>
      <div class="bulk">
        <button type="button" onClick={() => setSelected(new Set(all.map((j) => j.jobId)))} disabled={all.length === 0}>Select all</button>
        <button type="button" onClick={() => setSelected(new Set())} disabled={selected.size === 0}>Select none</button>
        <ConfirmButton label={`Retry selected (${selected.size})`} confirmLabel={`Retry ${selected.size} jobs`} disabled={busy || selected.size === 0}
          question={<>Retry {selected.size} failed jobs? Each gets a new job with its input snapshot.</>} onConfirm={retry} />
      </div>
      <div role="status" aria-live="polite">
        {outcomes.length > 0 && (
          <ul class="outcomes" aria-label="Retry results">
            {outcomes.map((o) => (
              <li key={o.jobId}>
                <a href={`/console/jobs/${o.jobId}`}>{o.jobId}</a>{' '}
                {o.newJobId ? <>retried as <a href={`/console/jobs/${o.newJobId}`}>{o.newJobId}</a></> : <span class="error">not retried: {o.error}</span>}
              </li>
            ))}
          </ul>
        )}
      </div>
      {TROUBLE_CODES.map((code) => (
        <section key={code} aria-labelledby={`trouble-${code}`}>
          <h3 id={`trouble-${code}`}>{code}</h3>
          <JobTable caption={`Failed with ${code}`} jobs={trouble.data?.[code] ?? []} selection={{ selected, toggle }} />
          <p><a href={jobsUrl({ status: 'failed', errorCode: code })}>All failed {code} jobs</a></p>
        </section>
      ))}
    </>
  );
}
