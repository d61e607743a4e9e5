/**
 * Spending caps at execution: each call reserves its maximum cost against every cap that applies, settles with
 * the real cost, and the sum of settled costs never exceeds a cap under any concurrency. Periods are UTC days and
 * months of the database's clock (pinned here).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAtomically, type SqlPool } from '../../lib/db/sql-pool.ts';
import { reserve, type Reservation } from '../../lib/capacity/reserve.ts';
import { settlementStatements } from '../../lib/capacity/settle-statements.ts';
import { fixedClock, holdRequest, NO_CAPS, racingPool, rowOf } from '../helpers/capacity.ts';
import { rawDb } from '../helpers/db.ts';
import { newId } from '../../lib/db/ids.ts';

let pool: SqlPool;
beforeAll(() => {
  pool = racingPool(20);
});
afterAll(async () => pool.end());

const T = Date.parse('2026-12-06T23:59:00.000Z');
const at = (seconds: number) => fixedClock(new Date(T + seconds * 1000));
const counter = (scope: string, subject: string, day: string) =>
  rowOf('SpendCounter', 'scope = ? AND subject = ? AND periodStart = ?', [scope, subject, day]);
const held = (results: Reservation[]) => results.filter((r) => r.kind === 'held');
const settle = (holdKey: string, costUsd: string) => runAtomically(settlementStatements(holdKey, { tokens: 10, costUsd }), pool);

describe('a $1 user cap and $0.05 calls', () => {
  const defaults = { ...NO_CAPS, user_day: '1.00000000' };

  it('60 consumers racing for the last dollar reserve at most 20 calls; after settling, exactly $1.00 is spent', async () => {
    const requests = Array.from({ length: 60 }, () => holdRequest({ clock: at(1), costUsd: '0.05000000', defaults }));
    const results = await Promise.all(requests.map((r) => reserve(r, pool)));
    expect(held(results)).toHaveLength(20);
    expect(await counter('user_day', 'user-1', '2026-12-06')).toMatchObject({ reservedUsd: '1.00000000', settledUsd: '0.00000000' });
    const heldKeys = results.flatMap((r) => (r.kind === 'held' ? [r.holdKey] : []));
    await Promise.all(heldKeys.map((key) => settle(key, '0.05000000')));
    expect(await counter('user_day', 'user-1', '2026-12-06')).toMatchObject({ reservedUsd: '0.00000000', settledUsd: '1.00000000' });
    const after = await reserve(holdRequest({ clock: at(2), costUsd: '0.00000001', defaults }), pool);
    expect(after).toMatchObject({ kind: 'refused', refusal: { reason: 'spend_cap', scope: 'user_day', retryInMs: 58_000 } });
  });

  it('a call that cost less than reserved gives the difference back to the cap', async () => {
    const first = holdRequest({ clock: at(1), costUsd: '0.60000000', defaults });
    await reserve(first, pool);
    expect((await reserve(holdRequest({ clock: at(1), costUsd: '0.60000000', defaults }), pool)).kind).toBe('refused');
    await settle(first.holdKey, '0.10000000');
    expect((await reserve(holdRequest({ clock: at(2), costUsd: '0.60000000', defaults }), pool)).kind).toBe('held');
  });

  it('resets at midnight UTC: the new day has a counter of its own', async () => {
    for (let i = 0; i < 20; i += 1) await reserve(holdRequest({ clock: at(1), costUsd: '0.05000000', defaults }), pool);
    expect((await reserve(holdRequest({ clock: at(59.999), costUsd: '0.05000000', defaults }), pool)).kind).toBe('refused');
    expect((await reserve(holdRequest({ clock: at(60), costUsd: '0.05000000', defaults }), pool)).kind).toBe('held');
    expect(await counter('user_day', 'user-1', '2026-12-07')).toMatchObject({ reservedUsd: '0.05000000' });
  });
});

describe('which caps apply', () => {
  const defaults = { job_type_day: '10', platform_day: '10', user_day: '10', user_month: '10' };

  it('a platform-key call is charged to every cap: user day and month, job type, platform', async () => {
    await reserve(holdRequest({ clock: at(1), costUsd: '0.25000000', defaults }), pool);
    for (const [scope, subject, period] of [['user_day', 'user-1', '2026-12-06'], ['user_month', 'user-1', '2026-12-01'], ['job_type_day', 'synthetic_job', '2026-12-06'], ['platform_day', '*', '2026-12-06']]) {
      expect(await counter(scope!, subject!, period!), scope).toMatchObject({ reservedUsd: '0.25000000' });
    }
  });

  it("a user's own key is never charged to the platform's caps, and to the user's only where a cap was set for that user", async () => {
    const byok = () => holdRequest({ clock: at(1), costUsd: '0.25000000', defaults, spend: 'own', capacity: null });
    expect((await reserve(byok(), pool)).kind).toBe('held');
    const [rows] = await (await rawDb()).query('SELECT COUNT(*) AS n FROM SpendCounter');
    expect((rows as { n: number }[])[0]!.n).toBe(0);
    await (await rawDb()).query("INSERT INTO SpendCap (scope, subject, capUsd, source, updatedAt) VALUES ('user_day', 'user-1', 0.3, 'admin', NOW(3))");
    expect((await reserve(byok(), pool)).kind).toBe('held');
    expect(await counter('user_day', 'user-1', '2026-12-06')).toMatchObject({ reservedUsd: '0.25000000' });
    expect(await counter('user_month', 'user-1', '2026-12-01')).toBeUndefined();
    expect(await reserve(byok(), pool)).toMatchObject({ kind: 'refused', refusal: { reason: 'spend_cap', scope: 'user_day' } });
  });

  it('a call that costs nothing (an unpriced mock, caps off) touches no counter, so no cap refuses it', async () => {
    await (await rawDb()).query("INSERT INTO SpendCap (scope, subject, capUsd, source, updatedAt) VALUES ('platform_day', '*', 0.01, 'admin', NOW(3))");
    await (await rawDb()).query("INSERT INTO SpendCounter (scope, subject, periodStart, settledUsd) VALUES ('platform_day', '*', '2026-12-06', 5)");
    expect((await reserve(holdRequest({ clock: at(1), defaults, spend: 'none' }), pool)).kind).toBe('held');
    expect(await counter('platform_day', '*', '2026-12-06')).toMatchObject({ reservedUsd: '0.00000000' });
    expect(await counter('user_day', 'user-1', '2026-12-06')).toBeUndefined();
  });

  it("an admin's cap for one user beats the scope's default, and a lower cap stops new reservations at once", async () => {
    const req = (userId: string) => holdRequest({ clock: at(1), costUsd: '1.00000000', defaults, job: { id: newId(), userId, jobType: 'synthetic_job', priority: 50 } });
    const first = req('alice');
    expect((await reserve(first, pool)).kind).toBe('held');
    await (await rawDb()).query("INSERT INTO SpendCap (scope, subject, capUsd, source, updatedAt) VALUES ('user_day', 'alice', 0.5, 'admin', NOW(3))");
    expect(await reserve(req('alice'), pool)).toMatchObject({ kind: 'refused', refusal: { scope: 'user_day' } });
    expect((await reserve(req('bob'), pool)).kind).toBe('held');
    await settle(first.holdKey, '1.00000000'); // the running call still settles: a lowered cap never cancels it
    expect(await counter('user_day', 'alice', '2026-12-06')).toMatchObject({ settledUsd: '1.00000000', reservedUsd: '0.00000000' });
  });

  it("the month cap's refusal lasts until the first day of the next month (UTC)", async () => {
    const monthly = { ...NO_CAPS, user_month: '0.1' };
    await reserve(holdRequest({ clock: at(1), costUsd: '0.10000000', defaults: monthly }), pool);
    expect(await reserve(holdRequest({ clock: at(1), costUsd: '0.10000000', defaults: monthly }), pool))
      .toMatchObject({ kind: 'refused', refusal: { reason: 'spend_cap', scope: 'user_month', retryInMs: 25 * 86_400_000 + 59_000 } }); // 23:59:01 on Dec 6 → Jan 1 00:00
  });
});
