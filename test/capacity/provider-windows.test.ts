/**
 * Provider limits shared by every consumer, at the repository: many reservations racing for one model's minute
 * window on the real database. The window is the database's minute, pinned by a fixed clock, so the races run
 * inside one window however long they take.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlPool } from '../../lib/db/sql-pool.ts';
import { reserve } from '../../lib/capacity/reserve.ts';
import { fixedClock, holdRequest, racingPool, rowOf } from '../helpers/capacity.ts';
import { countRows } from '../helpers/db.ts';

let pool: SqlPool;
beforeAll(() => {
  pool = racingPool(20);
});
afterAll(async () => pool.end());

const minute = '2026-12-06T10:15:00.000Z';
const inMinute = (second: number) => fixedClock(new Date(Date.parse(minute) + second * 1000));

describe('minute windows', () => {
  it('200 calls racing against RPM 60 admit exactly 60 in the window, never 61', async () => {
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => reserve(holdRequest({ clock: inMinute((i % 59) + 0.5) }), pool)));
    expect(results.filter((r) => r.kind === 'held')).toHaveLength(60);
    const refused = results.flatMap((r) => (r.kind === 'refused' ? [r.refusal] : []));
    expect(refused).toHaveLength(140);
    expect(new Set(refused.map((r) => r.reason))).toEqual(new Set(['window']));
    expect(await rowOf('ProviderWindow', 'provider = ? AND model = ?', ['mock', 'mock-chat'])).toMatchObject({ requests: 60 });
    // The user's share of the window counts the admitted calls only: the 140 refused ones left no trace in it.
    expect(await rowOf('ProviderUserWindow', 'provider = ? AND userId = ?', ['mock', 'user-1'])).toMatchObject({ requests: 60 });
    expect(await countRows('CapacityHold', "state = 'held'")).toBe(60);
    expect(await countRows('CapacityHold', "state = 'pending'")).toBe(0);
  });

  it('TPM 40,000 with 4,000-token estimates admits at most 10 calls in a minute', async () => {
    const limits = { rpm: 1_000, tpm: 40_000, maxInFlight: 1_000, maxOutputTokens: 1_000 };
    const results = await Promise.all(Array.from({ length: 50 }, () =>
      reserve(holdRequest({ clock: inMinute(20), capacity: { limits, tokens: 4_000 } }), pool)));
    expect(results.filter((r) => r.kind === 'held')).toHaveLength(10);
    expect(await rowOf('ProviderWindow', 'provider = ?', ['mock'])).toMatchObject({ requests: 10, tokens: 40_000 });
  });

  it('the next minute is a new window, and a refusal says when it starts', async () => {
    for (let i = 0; i < 60; i += 1) expect((await reserve(holdRequest({ clock: inMinute(10) }), pool)).kind).toBe('held');
    const refused = await reserve(holdRequest({ clock: inMinute(45) }), pool);
    expect(refused).toMatchObject({ kind: 'refused', refusal: { reason: 'window', retryInMs: 15_000 } });
    expect((await reserve(holdRequest({ clock: inMinute(60) }), pool)).kind).toBe('held');
    expect(await countRows('ProviderWindow')).toBe(2);
  });

  it('reserving twice under one key (a duplicate delivery of the same lease) takes one hold', async () => {
    const request = holdRequest({ clock: inMinute(5) });
    const [a, b] = await Promise.all([reserve(request, pool), reserve({ ...request, holdId: 'another-id-00000000000000' }, pool)]);
    expect([a.kind, b.kind]).toEqual(['held', 'held']);
    expect(await countRows('CapacityHold')).toBe(1);
    expect(await rowOf('ProviderWindow', 'provider = ?', ['mock'])).toMatchObject({ requests: 1 });
    expect(await rowOf('ProviderLimit', 'provider = ?', ['mock'])).toMatchObject({ inFlight: 1 });
    // Once more after both committed (a redelivery within the same lease): still one call counted everywhere.
    expect(await reserve({ ...request, holdId: 'a-third-id-000000000000000' }, pool)).toEqual({ kind: 'held', holdKey: request.holdKey });
    expect(await rowOf('ProviderWindow', 'provider = ?', ['mock'])).toMatchObject({ requests: 1 });
    expect(await rowOf('ProviderUserWindow', 'provider = ? AND userId = ?', ['mock', 'user-1'])).toMatchObject({ requests: 1 });
  });

  it("each user's share of the window counts that user's admitted calls", async () => {
    const users = ['user-a', 'user-b', 'user-c'];
    for (const [n, userId] of users.entries()) {
      for (let i = 0; i <= n; i += 1) {
        const jobId = `job-${userId}-${i}`;
        expect((await reserve(holdRequest({ clock: inMinute(30), job: { id: jobId, userId, jobType: 'synthetic_job', priority: 50 }, holdKey: `${jobId}:1:mock/mock-chat` }), pool)).kind).toBe('held');
      }
    }
    const rows = await pool.query('SELECT userId, requests FROM `ProviderUserWindow` ORDER BY userId') as { userId: string; requests: number }[];
    expect(rows.map((r) => [r.userId, Number(r.requests)])).toEqual([['user-a', 1], ['user-b', 2], ['user-c', 3]]);
  });

  it('calls in flight are limited across consumers', async () => {
    const limits = { rpm: 1_000, tpm: 1_000_000, maxInFlight: 3, maxOutputTokens: 10 };
    const results = await Promise.all(Array.from({ length: 12 }, () => reserve(holdRequest({ clock: inMinute(1), capacity: { limits, tokens: 10 } }), pool)));
    expect(results.filter((r) => r.kind === 'held')).toHaveLength(3);
    expect(results.find((r) => r.kind === 'refused')).toMatchObject({ refusal: { reason: 'in_flight' } });
  });
});
