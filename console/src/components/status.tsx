/** Small presentational pieces shared by the pages. */
import type { ComponentChildren } from 'preact';
import type { JobState } from '../api/client.ts';

/** A job's lifecycle state, coloured by outcome (text is always present; colour is never the only cue). */
export function StateBadge({ state }: { state: JobState }) {
  return <span class={`badge state-${state}`}>{state}</span>;
}

/** A loading / error line for a page section, announced to screen readers. */
export function LoadStatus(props: { loading: boolean; error: Error | undefined; children?: ComponentChildren }) {
  return (
    <p class="load-status" role="status" aria-live="polite">
      {props.error ? <span class="error">Could not load: {props.error.message}</span> : props.loading ? 'Loading…' : props.children}
    </p>
  );
}
