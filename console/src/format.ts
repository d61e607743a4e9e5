/** Display formats (date-fns for every date; no hand-written date maths). */
import { formatDistanceStrict, lightFormat, parseISO } from 'date-fns';

/** `2026-12-01 04:05:06` in the browser's time zone. */
export function formatTime(iso: string | null | undefined): string {
  return iso ? lightFormat(parseISO(iso), 'yyyy-MM-dd HH:mm:ss') : '—';
}

/** How long from `from` to `to` (or to now), e.g. `12 seconds`. */
export function formatDuration(from: string | undefined, to: string | undefined): string {
  if (!from) return '—';
  return formatDistanceStrict(to ? parseISO(to) : new Date(), parseISO(from));
}

/** An ISO instant as the value of an `<input type="datetime-local">` (local time, minutes). */
export function toLocalInput(iso: string | undefined): string {
  return iso ? lightFormat(parseISO(iso), "yyyy-MM-dd'T'HH:mm") : '';
}

/** The value of an `<input type="datetime-local">` as an ISO instant, or undefined when empty. */
export function fromLocalInput(value: string): string | undefined {
  return value ? new Date(value).toISOString() : undefined;
}

/** `0.00012300` USD → `$0.000123`. */
export function formatUsd(decimal: string): string {
  return `$${Number(decimal).toLocaleString('en-US', { maximumFractionDigits: 6, minimumFractionDigits: 2 })}`;
}

/** A decimal USD text (`"0.00012000"`) in integer units of 1e-8 USD, so sums stay exact. */
export function usdUnits(decimal: string): bigint {
  const [whole = '0', fraction = ''] = decimal.split('.');
  return BigInt(whole) * 100_000_000n + BigInt(fraction.padEnd(8, '0').slice(0, 8));
}

/** Units of 1e-8 USD back to the API's decimal text (8 places). */
export function usdText(units: bigint): string {
  return `${units / 100_000_000n}.${(units % 100_000_000n).toString().padStart(8, '0')}`;
}

/** `1234567` → `1,234,567`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
