/**
 * Jobs: every job, filtered as `GET /admin-api/ai/jobs` allows (state, type, user, error code, created
 * range), one page at a time by cursor. The URL is the state: filters, cursor and sort order live in the
 * query string, so any view can be bookmarked and shared.
 */
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
  const onSubmit = (e: SubmitEvent) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const value = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    route(jobsUrl({
      status: value('status'), jobType: value('jobType'), userId: value('userId'), errorCode: value('errorCode'),
      createdFrom: fromLocalInput(value('createdFrom') ?? ''), createdTo: fromLocalInput(value('createdTo') ?? ''), sort: query.sort,
    }));
  };
  return (
    <>
      <h1 tabIndex={-1}>Jobs</h1>
      <form class="filters" role="search" aria-label="Filter jobs" onSubmit={onSubmit} key={key}>
        <label>State
          <select name="status" defaultValue={query.status ?? ''}>
            <option value="">any</option>
            {JOB_STATES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <label>Type <input name="jobType" defaultValue={query.jobType ?? ''} placeholder="quiz_generation" /></label>
        <label>User <input name="userId" defaultValue={query.userId ?? ''} /></label>
        <label>Error code <input name="errorCode" defaultValue={query.errorCode ?? ''} placeholder="DEAD_LETTERED" /></label>
        <label>Created from <input type="datetime-local" name="createdFrom" defaultValue={toLocalInput(query.createdFrom)} /></label>
        <label>Created before <input type="datetime-local" name="createdTo" defaultValue={toLocalInput(query.createdTo)} /></label>
        <button type="submit" class="primary">Apply filters</button>
        <a href={jobsUrl({})}>Clear</a>
      </form>
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
