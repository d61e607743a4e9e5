/** UTC hour and day arithmetic shared by the rollups and their readers. */

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** The start of the UTC hour containing `t`. */
export function floorHour(t: Date): Date {
  return new Date(Math.floor(t.getTime() / HOUR_MS) * HOUR_MS);
}

/** Midnight UTC starting the day containing `t`. */
export function floorDay(t: Date): Date {
  return new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
}

/** `YYYY-MM-DD` of a UTC day. */
export function dayKey(t: Date): string {
  return t.toISOString().slice(0, 10);
}

/** The later of two dates. */
export function maxDate(a: Date, b: Date): Date {
  return a.getTime() >= b.getTime() ? a : b;
}

/** The earlier of two dates. */
export function minDate(a: Date, b: Date): Date {
  return a.getTime() <= b.getTime() ? a : b;
}

/** A `DATE_FORMAT(…, '%Y-%m-%d %H:00:00')` or `DATE(…)` result (UTC) as a Date. */
export function parseSqlTime(value: string | Date): Date {
  if (value instanceof Date) return value;
  return new Date(`${value.replace(' ', 'T').slice(0, 19)}${value.length <= 10 ? 'T00:00:00' : ''}Z`);
}
