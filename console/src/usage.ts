/**
 * Sums over the usage report's rows (day × job type × model × credential mode [× user]), for the Usage page
 * and the overview's spend. Costs are added in integer units of 1e-8 USD, as the API does, so a page's
 * totals equal the ledger's to the last digit.
 */
import { addDays, eachDayOfInterval, lightFormat, parseISO } from 'date-fns';
import type { components } from './api/schema';
import { usdText, usdUnits } from './format.ts';

export type UsageReport = components['schemas']['UsageReport'];
export type UsageRow = UsageReport['rows'][number];

export interface UsageSums {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Decimal USD, 8 places. */
  costUsd: string;
}

interface Acc { calls: number; promptTokens: number; completionTokens: number; totalTokens: number; cost: bigint }

const zero = (): Acc => ({ calls: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0n });

function add(acc: Acc, r: UsageSums): void {
  acc.calls += r.calls;
  acc.promptTokens += r.promptTokens;
  acc.completionTokens += r.completionTokens;
  acc.totalTokens += r.totalTokens;
  acc.cost += usdUnits(r.costUsd);
}

function out(acc: Acc): UsageSums {
  const { cost, ...counts } = acc;
  return { ...counts, costUsd: usdText(cost) };
}

/** All rows summed. */
export function sumRows(rows: readonly UsageSums[]): UsageSums {
  const acc = zero();
  for (const r of rows) add(acc, r);
  return out(acc);
}

/** Rows summed per `keyOf(row)`, highest cost first (ties by key). */
export function groupRows(rows: readonly UsageRow[], keyOf: (r: UsageRow) => string): { key: string; sums: UsageSums }[] {
  const groups = new Map<string, Acc>();
  for (const r of rows) {
    const key = keyOf(r);
    let acc = groups.get(key);
    if (!acc) groups.set(key, (acc = zero()));
    add(acc, r);
  }
  return [...groups]
    .sort(([ka, a], [kb, b]) => (b.cost > a.cost ? 1 : b.cost < a.cost ? -1 : ka.localeCompare(kb)))
    .map(([key, acc]) => ({ key, sums: out(acc) }));
}

/** Every UTC day from `from` to `to` (inclusive), `YYYY-MM-DD`. */
export function daysOf(from: string, to: string): string[] {
  return eachDayOfInterval({ start: parseISO(from), end: parseISO(to) }).map((d) => lightFormat(d, 'yyyy-MM-dd'));
}

/** Today's UTC day, `YYYY-MM-DD` (the API counts days in UTC). */
export function utcToday(): string {
  return new Date().toISOString().slice(0, 10);
}

/** `day` moved by `n` days (a calendar day, not 24 h in local time). */
export function shiftDay(day: string, n: number): string {
  return lightFormat(addDays(parseISO(day), n), 'yyyy-MM-dd');
}

/** A UTC day as the chart's x value (seconds). */
export function daySeconds(day: string): number {
  return parseISO(`${day}T00:00:00Z`).getTime() / 1000;
}

/** Per day of `days` (zeros where no row), `pick` of the day's sums. */
export function perDay(rows: readonly UsageRow[], days: readonly string[], pick: (s: UsageSums) => number): number[] {
  const byDay = new Map(groupRows(rows, (r) => r.day).map((g) => [g.key, g.sums]));
  return days.map((d) => {
    const s = byDay.get(d);
    return s ? pick(s) : 0;
  });
}

/** `provider/model`, as the job detail names models. */
export const modelOf = (r: UsageRow) => `${r.provider}/${r.model}`;
