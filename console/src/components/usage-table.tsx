/** A usage breakdown as a table: one row per group (highest cost first) and the total in the footer. */
import { formatCount, formatUsd } from '../format.ts';
import type { UsageSums } from '../usage.ts';

export interface UsageTableProps {
  caption: string;
  /** Header of the group column, e.g. "Model". */
  groupLabel: string;
  groups: readonly { key: string; sums: UsageSums }[];
  total?: UsageSums;
  testId?: string;
}

const cells = (s: UsageSums) => [formatCount(s.calls), formatCount(s.promptTokens), formatCount(s.completionTokens), formatCount(s.totalTokens), formatUsd(s.costUsd)];
const COLUMNS = ['calls', 'prompt', 'completion', 'tokens', 'cost'];
const row = (s: UsageSums) => cells(s).map((c, i) => <td key={i} class="num" data-col={COLUMNS[i]} data-usd={i === 4 ? s.costUsd : undefined}>{c}</td>);

export function UsageTable(p: UsageTableProps) {
  return (
    <table data-testid={p.testId}>
      <caption>{p.caption}</caption>
      <thead>
        <tr>
          <th scope="col">{p.groupLabel}</th><th scope="col">Calls</th><th scope="col">Prompt tokens</th>
          <th scope="col">Completion tokens</th><th scope="col">Total tokens</th><th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        {p.groups.map((g) => (
          <tr key={g.key} data-key={g.key}><th scope="row">{g.key}</th>{row(g.sums)}</tr>
        ))}
        {p.groups.length === 0 && <tr><td colSpan={6}>No usage in this range.</td></tr>}
      </tbody>
      {p.total && (
        <tfoot><tr><th scope="row">Total</th>{row(p.total)}</tr></tfoot>
      )}
    </table>
  );
}
