/**
 * Spending caps at job creation: a user whose spend reached a cap that applies to the new job gets 429
 * SPEND_LIMIT_REACHED with Retry-After at the end of the cap's UTC period, and nothing is written. The caps are
 * checked by the creating transaction's guard (one round trip), against the counters the engine keeps.
 */
import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as userHandler } from '../../functions/api-user.ts';
import { countRows, rawDb } from '../helpers/db.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

const CREATE_FEYNMAN = 'POST /api/ai/feynman-evaluations';
const body = { concept: 'Entropy', explanation: 'Disorder tends to grow.' };
const create = (sub = 'user-1') => invoke(userHandler, apiEvent(CREATE_FEYNMAN, { claims: userClaims(sub), body }));

/** The database's UTC date and now (the periods are the database's, not this process's). */
async function dbNow(): Promise<Date> {
  const [rows] = await (await rawDb()).query('SELECT UTC_TIMESTAMP(3) AS now');
  return new Date((rows as { now: Date }[])[0]!.now);
}

async function spent(scope: string, subject: string, usd: string, period: 'day' | 'month' = 'day'): Promise<void> {
  const start = period === 'day' ? 'UTC_DATE()' : "DATE_FORMAT(UTC_DATE(), '%Y-%m-01')";
  await (await rawDb()).query(`INSERT INTO SpendCounter (scope, subject, periodStart, reservedUsd, settledUsd) VALUES (?, ?, ${start}, 0, ?)`, [scope, subject, usd]);
}

async function cap(scope: string, subject: string, usd: string): Promise<void> {
  await (await rawDb()).query("INSERT INTO SpendCap (scope, subject, capUsd, source, updatedAt) VALUES (?, ?, ?, 'admin', NOW(3))", [scope, subject, usd]);
}

describe('SPEND_LIMIT_REACHED at create', () => {
  it("refuses a user whose day's spend reached the default cap: 429, Retry-After = seconds to midnight UTC, nothing written", async () => {
    await spent('user_day', 'user-1', '2.00000000'); // the default user_day cap is $2
    const res = await create();
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('SPEND_LIMIT_REACHED');
    const now = await dbNow();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(Math.abs(Number(res.headers['retry-after']) - (midnight - now.getTime()) / 1000)).toBeLessThan(5);
    expect(await countRows('AiJob')).toBe(0);
    expect(await countRows('OutboxEvent')).toBe(0);
    expect((await create('user-2')).status).toBe(202); // another user is not affected
  });

  it('the monthly cap refuses until the first day of the next month (UTC)', async () => {
    await spent('user_month', 'user-1', '20.00000000', 'month');
    const res = await create();
    expect(res.status).toBe(429);
    const now = await dbNow();
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    expect(Math.abs(Number(res.headers['retry-after']) - (nextMonth - now.getTime()) / 1000)).toBeLessThan(5);
  });

  it("a cap an admin lowered below today's spend stops new jobs at once; the platform's cap stops everyone's", async () => {
    await spent('user_day', 'user-1', '0.50000000');
    expect((await create()).status).toBe(202);
    await cap('user_day', 'user-1', '0.5');
    expect((await create()).body.error.code).toBe('SPEND_LIMIT_REACHED');
    await spent('platform_day', '*', '100.00000000');
    expect((await create('user-3')).status).toBe(429);
  });

  it('spend below the cap is admitted', async () => {
    await spent('user_day', 'user-1', '1.99999999');
    expect((await create()).status).toBe(202);
  });
});
