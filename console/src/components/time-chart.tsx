/**
 * A time-series chart drawn by uPlot (canvas; axes, ticks, time formatting and the hover legend are uPlot's).
 * Times are UTC instants in seconds and shown in UTC, as the API counts days and hours. The canvas is an image
 * to assistive technology (`role="img"` with a label); every chart on a page sits next to its numbers as text
 * or a table, which is what screen readers and tests read.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  color: string;
  values: readonly number[];
  /** Which y scale and axis: left (default) or right. */
  axis?: 'left' | 'right';
}

export interface TimeChartProps {
  /** Accessible name of the chart image; also its visible caption. */
  label: string;
  /** UTC instants, seconds. */
  times: readonly number[];
  series: readonly ChartSeries[];
  /** Axis titles. */
  leftAxis: string;
  rightAxis?: string;
  /** Bars (amounts per bucket) rather than lines, when there is one series. */
  bars?: boolean;
  /** Tick labels: whole days or hours. */
  unit: 'day' | 'hour';
  height?: number;
  testId?: string;
}

const utc = (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');

function optionsOf(p: TimeChartProps, width: number): uPlot.Options {
  // Bars for one series; several series as lines with points (uPlot's core bars would overlap).
  const bars = p.bars && p.series.length === 1;
  const paths = bars ? uPlot.paths.bars?.({ size: [0.8, 40] }) : undefined;
  // Half a bucket either side, so the first and last bucket (or a single one) are not on the frame.
  const half = p.unit === 'day' ? 43_200 : 1_800;
  const scale = (axis: 'left' | 'right' | undefined) => (axis === 'right' ? 'right' : 'left');
  return {
    width,
    height: p.height ?? 220,
    tzDate: utc,
    // Our own legend below (a list); uPlot's is an unlabeled table.
    legend: { show: false },
    scales: { x: { time: true, range: (_u, min, max) => [(p.times[0] ?? min) - half, (p.times.at(-1) ?? max) + half] }, left: { auto: true, range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] }, right: { auto: true, range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    series: [
      { label: p.unit === 'day' ? 'Day (UTC)' : 'Hour (UTC)', value: p.unit === 'day' ? '{YYYY}-{MM}-{DD}' : '{YYYY}-{MM}-{DD} {HH}:00' },
      ...p.series.map((s) => ({ label: s.label, stroke: s.color, fill: bars ? `${s.color}99` : undefined, width: 2, points: { show: !bars }, scale: scale(s.axis), ...(paths ? { paths } : {}) })),
    ],
    axes: [
      // Ticks on whole buckets only (a day chart never labels noon).
      { values: p.unit === 'day' ? '{MM}-{DD}' : '{HH}:00', incrs: p.unit === 'day' ? [1, 2, 7, 14, 28].map((d) => d * 86_400) : [1, 2, 3, 6].map((h) => h * 3_600) },
      { scale: 'left', label: p.leftAxis },
      ...(p.rightAxis ? [{ scale: 'right', side: 1 as const, label: p.rightAxis, grid: { show: false } }] : []),
    ],
  };
}

/** The chart, redrawn when its data changes and resized with its container. */
export function TimeChart(p: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const key = JSON.stringify([p.times, p.series.map((s) => [s.label, s.values])]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data = [p.times as number[], ...p.series.map((s) => s.values as number[])] as uPlot.AlignedData;
    const plot = new uPlot(optionsOf(p, Math.max(el.clientWidth, 320)), data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 320), height: p.height ?? 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [key]);
  return (
    <figure class="chart" data-testid={p.testId}>
      <div ref={box} role="img" aria-label={p.label} />
      <figcaption>
        {p.label}
        <ul class="legend">
          {p.series.map((s) => <li key={s.label}><span class="swatch" style={{ background: s.color }} aria-hidden="true" />{s.label}{s.axis === 'right' ? ' (right axis)' : ''}</li>)}
        </ul>
      </figcaption>
    </figure>
  );
}
