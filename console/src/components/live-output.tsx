/**
 * A running job's output as the model writes it, and its status changes, without reloads: the project's job
 * watcher (lib/client/watch-job.ts) through the stage's realtime push when config.json names one (the admin may
 * subscribe to any job's channel: the owner's segment comes from the job's user), and the admin stream route's
 * log always. Text grows in place; items appear one by one; a new attempt replaces what the previous one showed.
 */
import { useEffect, useState } from 'preact/hooks';
import { watchJob } from '../../../lib/client/watch-job.ts';
import type { StreamReaderState } from '../../../lib/stream/reader-state.ts';
import type { AdminJobDetail } from '../api/client.ts';
import { consoleConfig, currentSession } from '../session.ts';

const itemText = (item: unknown) => (typeof item === 'string' ? item : JSON.stringify(item));

/** Watches `job` from its page's load to its end; `onStatus` after every status change (the page reloads the job). */
export function LiveOutput({ job, onStatus }: { job: AdminJobDetail; onStatus(): void }) {
  const [view, setView] = useState<StreamReaderState>();
  const [how, setHow] = useState('connecting');
  const [error, setError] = useState<string>();
  useEffect(() => {
    const stop = new AbortController();
    void consoleConfig().then((config) => watchJob(job.jobId, {
      apiUrl: location.origin, admin: true, owner: job.userId, getToken: () => currentSession()?.token ?? '',
      realtime: config.realtime ? { httpEndpoint: config.realtime.httpEndpoint } : false, signal: stop.signal,
      onChange: setView, onStatus, onTransport: (t) => setHow(t === 'realtime' ? 'live' : 'reading the log'),
    })).then(() => setHow('finished'), (err: Error) => stop.signal.aborted || setError(err.message));
    return () => stop.abort();
  }, [job.jobId]);
  const fields = view ? [...Object.keys(view.text), ...Object.keys(view.items)] : [];
  return (
    <section aria-labelledby="live-heading">
      <h2 id="live-heading">Output as it is written</h2>
      <p class="hint" role="status" data-testid="live-state">
        {error ? <span class="error">Not following the job: {error}</span> : <>Attempt {view?.attempt || '—'}, {how}.</>}
      </p>
      {fields.length === 0 && <p>Nothing written yet.</p>}
      {view && Object.entries(view.text).map(([field, text]) => (
        <div key={field}><h3>{field}</h3><p class="live-text" data-testid={`live-text-${field}`}>{text}</p></div>
      ))}
      {view && Object.entries(view.items).map(([field, items]) => (
        <div key={field}><h3>{field}</h3><ol data-testid={`live-items-${field}`}>{items.map((item, i) => <li key={i}>{itemText(item)}</li>)}</ol></div>
      ))}
    </section>
  );
}
