/** The overview's finished jobs: per window by outcome with the failure rate, and per hour as a chart. */
import type { StatsResponse } from '../api/client.ts';
import { formatCount } from '../format.ts';
import { TimeChart } from './time-chart.tsx';

type Finished = StatsResponse['jobs']['finished'];
type Counts = Finished['lastHour']['byStatus'];

/** Failed jobs over all finished ones (succeeded, failed, cancelled), or null when none finished. */
export function failureRate(c: Counts): number | null {
  const finished = c.succeeded + c.failed + c.cancelled;
  return finished === 0 ? null : c.failed / finished;
}

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);

export function FinishedJobs({ finished }: { finished: Finished }) {
  const windows = [['lastHour', 'Last hour', finished.lastHour.byStatus], ['last24h', 'Last 24 h', finished.last24h.byStatus]] as const;
  const hours = finished.perHour;
  return (
    <section aria-labelledby="finished-heading">
      <h2 id="finished-heading">Finished jobs</h2>
      <table data-testid="finished-jobs">
        <caption>Finished jobs by outcome (24 h: since the start of the hour 23 hours ago)</caption>
        <thead><tr><th scope="col">Window</th><th scope="col">Succeeded</th><th scope="col">Failed</th><th scope="col">Cancelled</th><th scope="col">Finished</th><th scope="col">Failure rate</th></tr></thead>
        <tbody>
          {windows.map(([id, label, c]) => (
            <tr key={id} data-window={id}>
              <th scope="row">{label}</th>
              <td class="num" data-outcome="succeeded">{formatCount(c.succeeded)}</td>
              <td class="num" data-outcome="failed">{formatCount(c.failed)}</td>
              <td class="num" data-outcome="cancelled">{formatCount(c.cancelled)}</td>
              <td class="num" data-outcome="finished">{formatCount(c.succeeded + c.failed + c.cancelled)}</td>
              <td class={(failureRate(c) ?? 0) > 0.1 ? 'num unhealthy' : 'num'} data-outcome="failure-rate">{percent(failureRate(c))}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <TimeChart label="Finished jobs per hour, last 24 h (UTC)" unit="hour" bars testId="throughput-chart"
        times={hours.map((h) => Date.parse(h.hour) / 1000)} leftAxis="jobs"
        series={[
          { label: 'Succeeded', color: '#1a7f37', values: hours.map((h) => h.byStatus.succeeded) },
          { label: 'Failed', color: '#cf222e', values: hours.map((h) => h.byStatus.failed) },
          { label: 'Cancelled', color: '#6e7781', values: hours.map((h) => h.byStatus.cancelled) },
        ]} />
    </section>
  );
}
