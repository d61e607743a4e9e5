/**
 * Jobs: every job, filtered as `GET /admin-api/ai/jobs` allows (state, type, user, error code, created
 * range), one page at a time by cursor. The URL is the state: filters, cursor and sort order live in the
 * query string, so any view can be bookmarked and shared.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, JOB_STATES, unwrap, type AdminJobListQuery } from '../api/client.ts';
import { JobTable } from '../components/job-table.tsx';
import { LoadStatus } from '../components/status.tsx';
import { fromLocalInput, toLocalInput } from '../format.ts';
import { useLoad } from '../hooks.ts';

const FILTERS = ['status', 'jobType', 'userId', 'errorCode', 'createdFrom', 'createdTo'] as const;
const PAGE_SIZE = 25;

/** The API query of the URL's query string (unknown keys dropped). */
export function listQueryOf(q: Record<string, string>): AdminJobListQuery {
  const query: Record<string, string | number> = { limit: PAGE_SIZE };
  for (const key of [...FILTERS, 'cursor'] as const) if (q[key]) query[key] = q[key];
  return query as AdminJobListQuery;
}

/** `/console/jobs?…` for these parameters (empty ones left out). */
export function jobsUrl(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => Boolean(e[1])));
  return `/console/jobs${search.size ? `?${search}` : ''}`;
}

export function JobsPage() {
  const { query, route } = useLocation();
  const listQuery = listQueryOf(query);
  const key = JSON.stringify(listQuery);
  const page = useLoad(async () => unwrap(await api.GET('/admin-api/ai/jobs', { params: { query: listQuery } })), [key]);
  const sort = query.sort === 'asc' ? 'asc' : 'desc';
  const filters = Object.fromEntries(FILTERS.map((f) => [f, query[f]]));
  return (
    <>
      <h1 tabIndex={-1}>Jobs</h1>
      <FilterForm key={key} query={query} onApply={(f) => route(jobsUrl({ ...f, sort: query.sort }))} />
      <LoadStatus loading={page.loading} error={page.error}>{page.data?.items.length ?? 0} jobs on this page</LoadStatus>
      {page.data && (
        <JobTable caption="Jobs, filtered" jobs={page.data.items} sort={sort}
          onSortChange={(s) => route(jobsUrl({ ...filters, cursor: query.cursor, sort: s }), true)} />
      )}
      <nav aria-label="Pages" class="pager">
        {query.cursor && <a href={jobsUrl({ ...filters, sort: query.sort })}>First page</a>}
        {page.data?.nextCursor && <a href={jobsUrl({ ...filters, sort: query.sort, cursor: page.data.nextCursor })}>Next page</a>}
      </nav>
    </>
  );
}

type Filters = Record<(typeof FILTERS)[number], string>;

/** The filter form, its fields controlled and seeded from the URL (re-created when the URL changes). */
function FilterForm(p: { query: Record<string, string>; onApply(filters: Partial<Filters>): void }) {
  const [f, setF] = useState<Filters>({
    status: p.query.status ?? '', jobType: p.query.jobType ?? '', userId: p.query.userId ?? '', errorCode: p.query.errorCode ?? '',
    createdFrom: toLocalInput(p.query.createdFrom), createdTo: toLocalInput(p.query.createdTo),
  });
  const bind = (name: keyof Filters) => ({
    name, value: f[name], onInput: (e: Event) => setF({ ...f, [name]: (e.currentTarget as HTMLInputElement).value }),
  });
  const onSubmit = (e: SubmitEvent) => {
    e.preventDefault();
    p.onApply({
      status: f.status, jobType: f.jobType.trim(), userId: f.userId.trim(), errorCode: f.errorCode.trim(),
      createdFrom: fromLocalInput(f.createdFrom) ?? '', createdTo: fromLocalInput(f.createdTo) ?? '',
    });
  };
  return (
    <form class="filters" role="search" aria-label="Filter jobs" onSubmit={onSubmit}>
      <label>State
        <select {...bind('status')} onChange={(e) => setF({ ...f, status: e.currentTarget.value })}>
          <option value="">any</option>
          {JOB_STATES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </label>
      <label>Type <input {...bind('jobType')} placeholder="quiz_generation" /></label>
      <label>User <input {...bind('userId')} /></label>
      <label>Error code <input {...bind('errorCode')} placeholder="DEAD_LETTERED" /></label>
      <label>Created from <input type="datetime-local" {...bind('createdFrom')} /></label>
      <label>Created before <input type="datetime-local" {...bind('createdTo')} /></label>
      <button type="submit" class="primary">Apply filters</button>
      <a href={jobsUrl({})}>Clear</a>
    </form>
  );
}
