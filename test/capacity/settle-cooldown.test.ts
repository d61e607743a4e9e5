/**
 * Settling holds with the real usage, cooling a model down after a 429 (shared by every consumer, the longest
 * Retry-After wins, the admitted rate cut and recovering), and the sweep that gives back holds of consumers that
 * died. Real database; the database's clock pinned per statement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAtomically, type SqlPool } from '../../lib/db/sql-pool.ts';
import { reserve } from '../../lib/capacity/reserve.ts';
import { cooldownStatement, settlementStatements } from '../../lib/capacity/settle-statements.ts';
import { sweepCapacity } from '../../lib/capacity/sweep.ts';
import type { DbClock } from '../../lib/capacity/db-clock.ts';
import { fixedClock, holdRequest, racingPool, rowOf } from '../helpers/capacity.ts';
import { countRows } from '../helpers/db.ts';

let pool: SqlPool;
beforeAll(() => {
  pool = racingPool(10);
});
afterAll(async () => pool.end());

const T = Date.parse('2026-12-06T10:15:00.000Z');
const at = (seconds: number) => fixedClock(new Date(T + seconds * 1000));
const route = { provider: 'mock', model: 'mock-chat' };
const window = () => rowOf('ProviderWindow', 'provider = ? AND model = ? AND windowStart = ?', ['mock', 'mock-chat', new Date(T)]);
const limitRow = () => rowOf('ProviderLimit', 'provider = ? AND model = ?', ['mock', 'mock-chat']);
const settle = (holdKey: string, tokens: number, costUsd = '0.00000000') => runAtomically(settlementStatements(holdKey, { tokens, costUsd }), pool);
const coolDown = async (waitMs: number, clock: DbClock) => {
  const s = cooldownStatement(route, waitMs, clock);
  await pool.query(s.sql, s.values);
};

describe('settlement', () => {
  it('gives back the difference between the held estimate and the real tokens, once, and frees the call slot', async () => {
    const request = holdRequest({ clock: at(1), capacity: { limits: { rpm: 60, tpm: 10_000, maxInFlight: 5, maxOutputTokens: 900 }, tokens: 1_000 } });
    expect((await reserve(request, pool)).kind).toBe('held');
    expect(await window()).toMatchObject({ requests: 1, tokens: 1_000 });
    await settle(request.holdKey, 300);
    await settle(request.holdKey, 300); // a second run (the carried write written again) changes nothing
    expect(await window()).toMatchObject({ requests: 1, tokens: 300 });
    expect(await limitRow()).toMatchObject({ inFlight: 0 });
    expect(await countRows('CapacityHold')).toBe(0);
  });

  it('a call the provider refused gives its tokens back but keeps its request in the window', async () => {
    const request = holdRequest({ clock: at(1), capacity: { limits: { rpm: 60, tpm: 10_000, maxInFlight: 5, maxOutputTokens: 900 }, tokens: 1_000 } });
    await reserve(request, pool);
    await settle(request.holdKey, 0);
    expect(await window()).toMatchObject({ requests: 1, tokens: 0 });
  });
});

describe('cooldown after a 429', () => {
  it('Retry-After 20: no call is admitted to the model for 20 s, whoever asks; then it is', async () => {
    await reserve(holdRequest({ clock: at(1) }), pool);
    await coolDown(20_000, at(2));
    for (const s of [2, 10, 21.999]) {
      const refused = await reserve(holdRequest({ clock: at(s), job: { id: `j-${s}`, userId: `user-${s}`, jobType: 'synthetic_job', priority: 0 } }), pool);
      expect(refused, `at +${s}s`).toMatchObject({ kind: 'refused', refusal: { reason: 'cooldown', retryInMs: Math.round((22 - s) * 1000) } });
    }
    expect((await reserve(holdRequest({ clock: at(22) }), pool)).kind).toBe('held');
  });

  it('the longer of two cooldowns wins, in either order', async () => {
    await reserve(holdRequest({ clock: at(1) }), pool);
    await coolDown(20_000, at(2));
    await coolDown(5_000, at(3));
    expect((await limitRow())!.cooldownUntil).toEqual(new Date(T + 22_000));
    await coolDown(30_000, at(4));
    expect((await limitRow())!.cooldownUntil).toEqual(new Date(T + 34_000));
  });

  it('cuts the admitted rate to half once per cooldown, and lets it recover by 10 points a minute', async () => {
    await reserve(holdRequest({ clock: at(1) }), pool);
    await coolDown(10_000, at(50)); // until +60 s: the next window starts when the cooldown ends
    await coolDown(5_000, at(51)); // during the cooldown: no second cut (and it ends sooner: the longer wait stands)
    expect(await limitRow()).toMatchObject({ rateFactor: 500 });
    const admitted = async (second: number) => {
      const results = await Promise.all(Array.from({ length: 70 }, () => reserve(holdRequest({ clock: at(second) }), pool)));
      return results.filter((r) => r.kind === 'held').length;
    };
    expect(await admitted(60)).toBe(30); // RPM 60 at 50 %
    expect(await admitted(120)).toBe(36); // a minute after the cooldown: 60 %
    expect(await admitted(360)).toBe(60); // five minutes after: back to 100 %
  });
});

describe('sweep', () => {
  it('gives back a hold whose consumer died after reserving: the slot, the tokens and the reserved cost', async () => {
    const request = holdRequest({ clock: at(1), holdMs: 30_000 });
    await reserve(request, pool);
    expect(await limitRow()).toMatchObject({ inFlight: 1 });
    expect((await sweepCapacity({ pool, clock: at(30) })).holdsExpired).toBe(0); // not expired yet
    expect((await sweepCapacity({ pool, clock: at(32) })).holdsExpired).toBe(1);
    expect(await limitRow()).toMatchObject({ inFlight: 0 });
    expect(await window()).toMatchObject({ requests: 1, tokens: 0 });
    expect(await countRows('CapacityHold')).toBe(0);
  });

  it('deletes windows older than an hour', async () => {
    await reserve(holdRequest({ clock: at(1) }), pool);
    await reserve(holdRequest({ clock: at(3_600) }), pool);
    expect((await sweepCapacity({ pool, clock: at(3_700) })).windowsDeleted).toBe(2); // the first window and its user row
    expect(await countRows('ProviderWindow')).toBe(1);
  });
});
