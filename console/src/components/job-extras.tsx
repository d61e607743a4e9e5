/**
 * Job detail sections beyond the summary: cancel with confirmation, the redacted input snapshot, and the
 * business rows a succeeded job wrote (rendered from the data's own shape: no per-job-type code).
 */
import { useState } from 'preact/hooks';
import { api, unwrap, type AdminJobDetail } from '../api/client.ts';
import { ConfirmButton } from './confirm.tsx';
import { formatTime } from '../format.ts';

/** Jobs in these states can be cancelled (queued at once, running on request, as the cancel route does). */
export const CANCELLABLE_STATES: readonly AdminJobDetail['lifecycleStatus'][] = ['queued', 'running'];

export function CancelJob({ job, onDone }: { job: AdminJobDetail; onDone(): void }) {
  const [result, setResult] = useState<{ message?: string; error?: string }>({});
  const cancellable = CANCELLABLE_STATES.includes(job.lifecycleStatus);
  const cancel = async () => {
    try {
      const res = await api.POST('/admin-api/ai/jobs/{jobId}/cancel', { params: { path: { jobId: job.jobId } } });
      const view = unwrap(res);
      setResult({ message: res.response.status === 202 ? 'Cancellation requested: the running attempt stops at its next check.' : `Cancelled (${view.lifecycleStatus}).` });
    } catch (err) {
      setResult({ error: (err as Error).message });
    }
    onDone();
  };
  return (
    <>
      <ConfirmButton label="Cancel job" confirmLabel="Cancel the job" disabled={!cancellable} onConfirm={cancel}
        question={<>Cancel this {job.lifecycleStatus} job of {job.userId}? A running attempt is stopped; the job ends cancelled.</>} />
      {!cancellable && <p class="hint">Only queued or running jobs can be cancelled.</p>}
      {job.cancelRequestedAt && job.lifecycleStatus === 'running' && <p>Cancellation requested at {formatTime(job.cancelRequestedAt)}.</p>}
      <div role="status" aria-live="polite">
        {result.message && <p data-testid="cancel-result">{result.message}</p>}
        {result.error && <p class="error">Cancel refused: {result.error}</p>}
      </div>
    </>
  );
}

export function InputSnapshot({ job }: { job: AdminJobDetail }) {
  const s = job.inputSnapshot;
  return (
    <section aria-labelledby="snapshot-heading">
      <h2 id="snapshot-heading">Input snapshot (redacted)</h2>
      {s ? (
        <>
          <p>Schema {s.schemaVersion}, redaction rules v{s.redactionVersion}; stored {formatTime(s.createdAt)}, expires {formatTime(s.expiresAt)}. Secrets show as <code>[REDACTED]</code>.</p>
          <pre class="snapshot" data-testid="input-snapshot" tabIndex={0} aria-label="Input snapshot JSON">{JSON.stringify(s.content, null, 2)}</pre>
        </>
      ) : <p>None: retention deleted it.</p>}
    </section>
  );
}

type Row = Record<string, unknown>;
const isRow = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** A list of rows as a table whose columns are the rows' keys. */
function RowsTable({ caption, rows }: { caption: string; rows: Row[] }) {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return (
    <table>
      <caption>{caption}</caption>
      <thead><tr>{columns.map((c) => <th key={c} scope="col">{c}</th>)}</tr></thead>
      <tbody>{rows.map((r, i) => <tr key={i}>{columns.map((c) => <td key={c}>{text(r[c])}</td>)}</tr>)}</tbody>
    </table>
  );
}

export function BusinessRows({ job }: { job: AdminJobDetail }) {
  const artifacts = job.result?.artifacts ?? [];
  const entries = Object.entries(job.businessRows ?? {}).filter(([k]) => k !== 'jobId');
  return (
    <section aria-labelledby="artifacts-heading">
      <h2 id="artifacts-heading">Artifacts and business rows</h2>
      {artifacts.length === 0 ? <p>No artifacts.</p> : (
        <ul data-testid="artifacts">{artifacts.map((a) => <li key={a.artifactId}>{a.artifactType} <code>{a.artifactId}</code></li>)}</ul>
      )}
      {entries.map(([name, value]) => (Array.isArray(value) && value.every(isRow)
        ? <RowsTable key={name} caption={`Business rows: ${name}`} rows={value} />
        : isRow(value) ? <RowsTable key={name} caption={`Business row: ${name}`} rows={[value]} />
          : <p key={name}>{name}: {text(value)}</p>))}
    </section>
  );
}
