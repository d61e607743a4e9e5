/**
 * The jobs table (TanStack Table, headless): id linking to the detail page, state, type, user, error code,
 * attempts, created time — sortable by created time — and, when `selection` is given, a checkbox per row.
 */
import {
  createColumnHelper, createSortedRowModel, flexRender, rowSortingFeature, sortFn_datetime, tableFeatures, useTable, type SortingState,
} from '@tanstack/preact-table';
import type { AdminJobSummary } from '../api/client.ts';
import { formatTime } from '../format.ts';
import { StateBadge } from './status.tsx';

const features = tableFeatures({ rowSortingFeature, sortedRowModel: createSortedRowModel(), sortFns: { datetime: sortFn_datetime } });
const column = createColumnHelper<typeof features, AdminJobSummary>();

const COLUMNS = column.columns([
  column.accessor('jobId', { header: 'Job', enableSorting: false, cell: (c) => <a href={`/console/jobs/${c.getValue()}`}>{c.getValue()}</a> }),
  column.accessor('lifecycleStatus', { header: 'State', enableSorting: false, cell: (c) => <StateBadge state={c.getValue()} /> }),
  column.accessor('jobType', { header: 'Type', enableSorting: false }),
  column.accessor('userId', { header: 'User', enableSorting: false }),
  column.accessor((j) => j.errorCode ?? '', { id: 'errorCode', header: 'Error', enableSorting: false }),
  column.accessor((j) => `${j.attemptCount}/${j.maxAttempts}`, { id: 'attempts', header: 'Attempts', enableSorting: false }),
  column.accessor((j) => new Date(j.createdAt), { id: 'createdAt', header: 'Created', sortFn: 'datetime', cell: (c) => formatTime(c.row.original.createdAt) }),
]);

export interface JobTableProps {
  caption: string;
  jobs: readonly AdminJobSummary[];
  /** Created-time order; the API pages newest first, so this orders within the page. */
  sort?: 'asc' | 'desc';
  onSortChange?(sort: 'asc' | 'desc'): void;
  selection?: { selected: ReadonlySet<string>; toggle(jobId: string): void };
}

export function JobTable(p: JobTableProps) {
  const sorting: SortingState = [{ id: 'createdAt', desc: (p.sort ?? 'desc') === 'desc' }];
  const table = useTable({ features, data: p.jobs as AdminJobSummary[], columns: COLUMNS, state: { sorting } });
  const nextSort = sorting[0]?.desc ? 'asc' : 'desc';
  return (
    <table>
      <caption>{p.caption}</caption>
      <thead>
        {table.getHeaderGroups().map((group) => (
          <tr key={group.id}>
            {p.selection && <th scope="col"><span class="visually-hidden">Select</span></th>}
            {group.headers.map((h) => (
              <th key={h.id} scope="col" aria-sort={h.column.getCanSort() ? (sorting[0]?.desc ? 'descending' : 'ascending') : undefined}>
                {h.column.getCanSort()
                  ? <button type="button" class="link" onClick={() => p.onSortChange?.(nextSort)}>
                      {flexRender(h.column.columnDef.header, h.getContext())} {sorting[0]?.desc ? '↓' : '↑'}
                      <span class="visually-hidden">, sort {nextSort === 'asc' ? 'oldest first' : 'newest first'}</span>
                    </button>
                  : flexRender(h.column.columnDef.header, h.getContext())}
              </th>
            ))}
          </tr>
        ))}
      </thead>
      <tbody>
        {table.getRowModel().rows.map((row) => (
          <tr key={row.id} data-job-id={row.original.jobId}>
            {p.selection && (
              <td><input type="checkbox" aria-label={`Select job ${row.original.jobId}`} checked={p.selection.selected.has(row.original.jobId)}
                onChange={() => p.selection?.toggle(row.original.jobId)} /></td>
            )}
            {row.getAllCells().map((cell) => <td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</td>)}
          </tr>
        ))}
        {p.jobs.length === 0 && <tr><td colSpan={COLUMNS.length + (p.selection ? 1 : 0)}>No jobs.</td></tr>}
      </tbody>
    </table>
  );
}
