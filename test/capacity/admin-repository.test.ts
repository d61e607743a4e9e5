/**
 * The repository functions the admin and user surfaces build on: reading limits, caps, current use and
 * cooldowns; writing limits and caps with validation (0, negative, non-numeric, absurdly large, unknown model,
 * unknown scope or job type refused with a typed error, nothing written); the precedence of an admin's values
 * over the configuration.
 */
import { describe, expect, it } from 'vitest';
import { InvalidLimitError, UnknownModelError } from '../../lib/capacity/errors.ts';
import { DEFAULT_MODEL_LIMITS, ProviderLimitsConfig } from '../../lib/capacity/limits-config.ts';
import { endCooldown, readModelCapacity, resetModelLimits, setModelLimits } from '../../lib/capacity/limits-repository.ts';
import { reserve } from '../../lib/capacity/reserve.ts';
import { getSqlPool } from '../../lib/db/sql-pool.ts';
import { cooldownStatement } from '../../lib/capacity/settle-statements.ts';
import { readPlatformSpend, readUserSpend, removeSpendCap, setSpendCap } from '../../lib/spend/caps-repository.ts';
import { fixedClock, holdRequest, NO_CAPS, rowOf } from '../helpers/capacity.ts';
import { countRows } from '../helpers/db.ts';

const config = new ProviderLimitsConfig(DEFAULT_MODEL_LIMITS);
const chat = { provider: 'deepseek', model: 'deepseek-chat' };
const routes = [chat, { provider: 'mock', model: 'mock-chat' }];
const repo = { config, routes };
const clock = fixedClock('2026-12-06T10:15:30.000Z');
const jobTypes = ['synthetic_job', 'quiz_generation'];

describe('provider limits', () => {
  it.each([
    ['0', { rpm: 0 }], ['a negative', { tpm: -5 }], ['a fraction', { maxInFlight: 1.5 }], ['a string', { rpm: '60' }],
    ['NaN', { rpm: Number.NaN }], ['an absurdly large value', { tpm: 1e15 }], ['an unknown field', { burst: 3 }], ['nothing', {}],
  ])('refuses %s with InvalidLimitError, writing nothing', async (_, changes) => {
    await expect(setModelLimits(repo, chat, changes as never, 'admin:root')).rejects.toBeInstanceOf(InvalidLimitError);
    expect(await countRows('ProviderLimit')).toBe(0);
  });

  it('refuses a model no route calls with UnknownModelError', async () => {
    await expect(setModelLimits(repo, { provider: 'deepseek', model: 'deepseek-coder' }, { rpm: 10 }, 'admin:root')).rejects.toBeInstanceOf(UnknownModelError);
    await expect(setModelLimits(repo, { provider: 'nobody', model: 'x' }, { rpm: 10 }, 'admin:root')).rejects.toBeInstanceOf(UnknownModelError);
  });

  it("an admin's limits win over the configuration until reset; reads show limits, use and source", async () => {
    await setModelLimits(repo, chat, { rpm: 7 }, 'admin:root');
    const limits = { rpm: 300, tpm: 3_000_000, maxInFlight: 40, maxOutputTokens: 4_096 };
    const request = () => holdRequest({ clock, route: chat, capacity: { limits, tokens: 100 } });
    for (let i = 0; i < 8; i += 1) await reserve(request()); // a reservation writes the configuration into config rows only
    const [view] = await readModelCapacity({ ...repo, clock });
    expect(view).toMatchObject({ ...chat, rpm: 7, tpm: 3_000_000, maxInFlight: 40, source: 'admin', updatedBy: 'admin:root', inFlight: 7, cooldownUntil: null, rateFactor: 1000 });
    expect(view!.window).toMatchObject({ start: new Date('2026-12-06T10:15:00.000Z'), requests: 7, tokens: 700, rpm: 7 });
    await resetModelLimits(repo, chat, 'admin:root');
    expect(await rowOf('ProviderLimit', 'provider = ?', ['deepseek'])).toMatchObject({ rpm: 300, source: 'config' });
    expect((await reserve(request())).kind).toBe('held');
  });

  it('shows a model in cooldown and until when; an admin can end it', async () => {
    await reserve(holdRequest({ clock, route: chat }));
    const s = cooldownStatement(chat, 20_000, clock);
    await getSqlPool().query(s.sql, s.values);
    const [cooling] = await readModelCapacity({ ...repo, clock });
    expect(cooling).toMatchObject({ cooldownUntil: new Date('2026-12-06T10:15:50.000Z'), rateFactor: 500 });
    await endCooldown(repo, chat, 'admin:root');
    expect((await readModelCapacity({ ...repo, clock }))[0]).toMatchObject({ cooldownUntil: null, rateFactor: 1000 });
  });

  it('lists a routed model with its configured limits before any call', async () => {
    const views = await readModelCapacity({ ...repo, clock });
    expect(views.map((v) => [v.provider, v.model, v.rpm, v.source])).toEqual([['deepseek', 'deepseek-chat', 300, 'config'], ['mock', 'mock-chat', 100_000, 'config']]);
  });
});

describe('spending caps', () => {
  const defaults = { ...NO_CAPS, user_day: '2.00000000', platform_day: '100.00000000' };

  it.each([
    ['0', 'user_day', 'alice', 0], ['a negative', 'user_day', 'alice', -1], ['non-numeric', 'user_day', 'alice', 'lots'],
    ['absurdly large', 'user_day', 'alice', 1e9], ['more than 8 decimals', 'user_day', 'alice', '0.000000001'],
    ['an unknown scope', 'user_week', 'alice', 1], ['a user as the platform', 'platform_day', 'alice', 1], ['an unknown job type', 'job_type_day', 'nope', 1],
  ])('refuses %s with InvalidLimitError, writing nothing', async (_, scope, subject, cap) => {
    await expect(setSpendCap(scope, subject, cap, 'admin:root', { jobTypes })).rejects.toBeInstanceOf(InvalidLimitError);
    expect(await countRows('SpendCap')).toBe(0);
  });

  it("reads a user's spend against their caps, with where each cap comes from", async () => {
    await reserve(holdRequest({ clock, costUsd: '0.25000000', defaults, job: { id: 'j1', userId: 'alice', jobType: 'synthetic_job', priority: 50 } }));
    await setSpendCap('user_month', '*', '30', 'admin:root', { jobTypes });
    await setSpendCap('user_day', 'alice', '5', 'admin:root', { jobTypes });
    const [day, month] = await readUserSpend('alice', { defaults, clock });
    expect(day).toMatchObject({ scope: 'user_day', periodStart: '2026-12-06', periodEnd: new Date('2026-12-07T00:00:00Z'), capUsd: '5.00000000', capSource: 'subject', reservedUsd: '0.25000000', settledUsd: '0.00000000' });
    expect(month).toMatchObject({ scope: 'user_month', periodStart: '2026-12-01', periodEnd: new Date('2027-01-01T00:00:00Z'), capUsd: '30.00000000', capSource: 'default' });
    expect(await removeSpendCap('user_day', 'alice', { jobTypes })).toBe(true);
    expect((await readUserSpend('alice', { defaults, clock }))[0]).toMatchObject({ capUsd: '2.00000000', capSource: 'config' });
  });

  it("reads the platform's and every job type's day", async () => {
    const spend = await readPlatformSpend(jobTypes, { defaults, clock });
    expect(spend.map((s) => [s.scope, s.subject, s.capUsd])).toEqual([['platform_day', '*', '100.00000000'], ['job_type_day', 'synthetic_job', null], ['job_type_day', 'quiz_generation', null]]);
  });
});
