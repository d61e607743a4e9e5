/** The overview's spend by model: today (UTC) and the last 7 UTC days, from `GET /admin-api/ai/usage`. */
import { formatCount, formatUsd } from '../format.ts';
import { groupRows, modelOf, sumRows, type UsageReport } from '../usage.ts';

export function Spend({ report }: { report: UsageReport }) {
  const today = report.rows.filter((r) => r.day === report.to);
  const week = groupRows(report.rows, modelOf);
  const todayByModel = new Map(groupRows(today, modelOf).map((g) => [g.key, g.sums]));
  const todayTotal = sumRows(today);
  return (
    <section aria-labelledby="spend-heading">
      <h2 id="spend-heading">Spend by model</h2>
      <table data-testid="spend">
        <caption>Spend today ({report.to}, UTC) and over 7 days ({report.from} to {report.to})</caption>
        <thead>
          <tr><th scope="col">Model</th><th scope="col">Today: cost</th><th scope="col">Today: tokens</th><th scope="col">7 days: cost</th><th scope="col">7 days: tokens</th></tr>
        </thead>
        <tbody>
          {week.map(({ key, sums }) => (
            <tr key={key} data-model={key}>
              <th scope="row">{key}</th>
              <td class="num" data-col="today-cost" data-usd={todayByModel.get(key)?.costUsd ?? '0.00000000'}>{formatUsd(todayByModel.get(key)?.costUsd ?? '0')}</td>
              <td class="num">{formatCount(todayByModel.get(key)?.totalTokens ?? 0)}</td>
              <td class="num" data-col="week-cost" data-usd={sums.costUsd}>{formatUsd(sums.costUsd)}</td>
              <td class="num">{formatCount(sums.totalTokens)}</td>
            </tr>
          ))}
          {week.length === 0 && <tr><td colSpan={5}>No usage in the last 7 days.</td></tr>}
        </tbody>
        <tfoot>
          <tr data-model="total">
            <th scope="row">Total</th>
            <td class="num" data-col="today-cost" data-usd={todayTotal.costUsd}>{formatUsd(todayTotal.costUsd)}</td><td class="num">{formatCount(todayTotal.totalTokens)}</td>
            <td class="num" data-col="week-cost" data-usd={report.total.costUsd}>{formatUsd(report.total.costUsd)}</td><td class="num">{formatCount(report.total.totalTokens)}</td>
          </tr>
        </tfoot>
      </table>
      <p><a href="/console/usage">Usage by day, job type, credential mode and user</a></p>
    </section>
  );
}
