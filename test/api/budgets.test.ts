/**
 * The budget routes through the Lambda handlers on the real database: admins read provider limits and spending
 * caps with their use now (minute windows, calls in flight, cooldowns, today's and this month's spend) and change
 * them; bad input is a 400 VALIDATION_FAILED naming the field, with nothing written; a cap lowered below today's
 * spend stops new admissions at once and never cancels a running job; a user reads their own spend.
 */
import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as adminHandler } from '../../functions/api-admin.ts';
import { handler as userHandler } from '../../functions/api-user.ts';
import { budgetsResponseSchema, modelCapacitySchema, spendCapResetSchema, spendUseSchema, userSpendResponseSchema } from '../../lib/api/budget-schemas.ts';
import { ADMIN_ROUTES, routeKeyOf } from '../../lib/api/routes.ts';
import { DATABASE_CLOCK } from '../../lib/capacity/db-clock.ts';
import { reserve } from '../../lib/capacity/reserve.ts';
import { cooldownStatement, settlementStatements } from '../../lib/capacity/settle-statements.ts';
import { getPrisma } from '../../lib/db/client.ts';
import { getSqlPool, runAtomically } from '../../lib/db/sql-pool.ts';
import { lockJob } from '../../lib/jobs/lifecycle-lock.ts';
import { jobRegistry } from '../../lib/jobs/registry.ts';
import { adminClaims, apiEvent, invoke, userClaims } from '../helpers/api-events.ts';
import { DEFAULT_CAPS, holdRequest } from '../helpers/capacity.ts';
import { countRows, rawDb } from '../helpers/db.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

const chat = { provider: 'deepseek', model: 'deepseek-chat' };
const admin = (routeKey: string, o: { body?: unknown; query?: Record<string, string> } = {}) =>
  invoke(adminHandler, apiEvent(routeKey, { claims: adminClaims('root'), ...o }));
const createFeynman = (sub: string) => invoke(userHandler, apiEvent('POST /api/ai/feynman-evaluations', {
  claims: userClaims(sub), body: { concept: 'Entropy', explanation: 'Disorder tends to grow.' },
}));

/** Spend already counted today (or this month) for a subject, as settled calls left it. */
async function spent(scope: string, subject: string, usd: string): Promise<void> {
  const start = scope === 'user_month' ? "DATE_FORMAT(UTC_DATE(), '%Y-%m-01')" : 'UTC_DATE()';
  await (await rawDb()).query(`INSERT INTO SpendCounter (scope, subject, periodStart, reservedUsd, settledUsd) VALUES (?, ?, ${start}, 0, ?)`, [scope, subject, usd]);
}

async function dbNow(): Promise<Date> {
  const [rows] = await (await rawDb()).query('SELECT UTC_TIMESTAMP(3) AS now');
  return new Date((rows as { now: Date }[])[0]!.now);
}

describe('reading limits, caps and their use', () => {
  it('shows every routed model with its limits, its minute window, calls in flight and a cooldown until when', async () => {
    const limits = { rpm: 300, tpm: 3_000_000, maxInFlight: 40, maxOutputTokens: 4_096 };
    for (let i = 0; i < 3; i += 1) expect((await reserve(holdRequest({ clock: DATABASE_CLOCK, route: chat, capacity: { limits, tokens: 1_000 } }))).kind).toBe('held');
    const cool = cooldownStatement(chat, 20_000, DATABASE_CLOCK);
    await getSqlPool().query(cool.sql, cool.values);
    const res = await admin('GET /admin-api/ai/budgets');
    expect(res.status).toBe(200);
    const body = budgetsResponseSchema.parse(res.body);
    expect(body.models.map((m) => `${m.provider}/${m.model}`)).toEqual(['deepseek/deepseek-chat', 'deepseek/deepseek-reasoner']);
    const [m] = body.models;
    expect(m).toMatchObject({ rpm: 300, tpm: 3_000_000, maxInFlight: 40, source: 'config', inFlight: 3, admittedPerMille: 500 });
    expect(m!.window).toMatchObject({ requests: 3, tokens: 3_000, rpm: 150, tpm: 1_500_000 });
    const now = await dbNow();
    expect(Date.parse(m!.cooldownUntil!) - now.getTime()).toBeGreaterThan(15_000);
    expect(body.models[1]).toMatchObject({ rpm: 60, inFlight: 0, cooldownUntil: null, admittedPerMille: 1000 });
  });

  it("shows the platform's and every job type's day, the caps' defaults and overrides, and a user's day and month", async () => {
    await spent('platform_day', '*', '12.50000000');
    await spent('job_type_day', 'quiz_generation', '3.00000000');
    await spent('user_day', 'alice', '1.25000000');
    await spent('user_month', 'alice', '7.00000000');
    expect((await admin('PUT /admin-api/ai/budgets/caps', { body: { scope: 'user_day', subject: 'alice', capUsd: '1.25' } })).status).toBe(200);
    expect((await admin('PUT /admin-api/ai/budgets/caps', { body: { scope: 'platform_day', subject: '*', capUsd: 250 } })).status).toBe(200);
    const body = budgetsResponseSchema.parse((await admin('GET /admin-api/ai/budgets', { query: { userId: 'alice' } })).body);
    expect(body.spend[0]).toMatchObject({ scope: 'platform_day', subject: '*', capUsd: '250.00000000', capSource: 'subject', settledUsd: '12.50000000', usedUsd: '12.50000000', reached: false });
    expect(body.spend.find((s) => s.subject === 'quiz_generation')).toMatchObject({ scope: 'job_type_day', capUsd: '50.00000000', capSource: 'config', usedUsd: '3.00000000' });
    expect(body.spend.map((s) => s.subject)).toEqual(['*', ...jobRegistry.getAll().map((d) => d.jobType)]);
    expect(body.caps.defaults).toEqual(expect.arrayContaining([
      { scope: 'platform_day', capUsd: '250.00000000', source: 'default', configuredUsd: '100.00000000' },
      { scope: 'user_day', capUsd: '2.00000000', source: 'config', configuredUsd: '2.00000000' },
    ]));
    expect(body.caps.overrides).toEqual([expect.objectContaining({ scope: 'user_day', subject: 'alice', capUsd: '1.25000000', updatedBy: 'admin:root' })]);
    const now = await dbNow();
    expect(body.user).toEqual({ userId: 'alice', spend: [
      expect.objectContaining({ scope: 'user_day', capUsd: '1.25000000', usedUsd: '1.25000000', reached: true,
        resetsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString() }),
      expect.objectContaining({ scope: 'user_month', capUsd: '20.00000000', usedUsd: '7.00000000', reached: false,
        resetsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString() }),
    ] });
  });
});

describe('setting limits', () => {
  it("sets a model's limits (they stand until reset), resets them to the configuration, and ends a cooldown", async () => {
    const set = await admin('PUT /admin-api/ai/budgets/limits', { body: { ...chat, rpm: 7, maxInFlight: 3 } });
    expect(set.status).toBe(200);
    expect(modelCapacitySchema.parse(set.body)).toMatchObject({ ...chat, rpm: 7, tpm: 3_000_000, maxInFlight: 3, source: 'admin', updatedBy: 'admin:root' });
    const cool = cooldownStatement(chat, 60_000, DATABASE_CLOCK);
    await getSqlPool().query(cool.sql, cool.values);
    const ended = await admin('DELETE /admin-api/ai/budgets/cooldowns', { query: chat });
    expect(ended.body).toMatchObject({ cooldownUntil: null, admittedPerMille: 1000, rpm: 7 });
    const reset = await admin('DELETE /admin-api/ai/budgets/limits', { query: chat });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ rpm: 300, maxInFlight: 40, source: 'config' });
  });

  it.each([
    ['0', { rpm: 0 }, 'body.rpm'],
    ['a negative', { tpm: -5 }, 'body.tpm'],
    ['a fraction', { maxInFlight: 1.5 }, 'body.maxInFlight'],
    ['non-numeric', { rpm: '60' }, 'body.rpm'],
    ['absurdly large', { tpm: 1e15 }, 'body.tpm'],
    ['an unknown field', { burst: 3 }, 'body'],
    ['nothing to change', {}, 'body.rpm'],
    ['an unknown model', { model: 'deepseek-coder', rpm: 10 }, 'body.model'],
    ['an unknown provider', { provider: 'nobody', rpm: 10 }, 'body.model'],
  ])('refuses %s with 400 VALIDATION_FAILED naming the field, writing nothing', async (_, change, path) => {
    const res = await admin('PUT /admin-api/ai/budgets/limits', { body: { ...chat, ...change } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(await countRows('ProviderLimit')).toBe(0);
  });

  it('refuses a reset or cooldown end of an unknown model, or without one, naming the query field', async () => {
    for (const route of ['DELETE /admin-api/ai/budgets/limits', 'DELETE /admin-api/ai/budgets/cooldowns']) {
      const unknown = await admin(route, { query: { provider: 'deepseek', model: 'gpt-9' } });
      expect([unknown.status, unknown.body.error.details]).toEqual([400, [{ path: 'query.model', message: expect.stringContaining('deepseek/gpt-9') }]]);
      const missing = await admin(route, { query: { provider: 'deepseek' } });
      expect([missing.status, missing.body.error.details[0].path]).toEqual([400, 'query.model']);
    }
  });
});

describe('setting caps', () => {
  it("sets a user's cap, removes it (back to the default), and says when there was none", async () => {
    const set = await admin('PUT /admin-api/ai/budgets/caps', { body: { scope: 'user_month', subject: 'bob', capUsd: '35.5' } });
    expect(spendUseSchema.parse(set.body)).toMatchObject({ scope: 'user_month', subject: 'bob', capUsd: '35.50000000', capSource: 'subject' });
    const removed = spendCapResetSchema.parse((await admin('DELETE /admin-api/ai/budgets/caps', { query: { scope: 'user_month', subject: 'bob' } })).body);
    expect(removed).toMatchObject({ removed: true, use: { capUsd: '20.00000000', capSource: 'config' } });
    expect((await admin('DELETE /admin-api/ai/budgets/caps', { query: { scope: 'user_month', subject: 'bob' } })).body.removed).toBe(false);
  });

  it.each([
    ['0', { capUsd: 0 }, 'body.capUsd'],
    ['"0.00"', { capUsd: '0.00' }, 'body.capUsd'],
    ['a negative', { capUsd: -1 }, 'body.capUsd'],
    ['non-numeric', { capUsd: 'lots' }, 'body.capUsd'],
    ['absurdly large', { capUsd: 1e9 }, 'body.capUsd'],
    ['absurdly large as text', { capUsd: '100000.00000001' }, 'body.capUsd'],
    ['more than 8 decimals', { capUsd: '0.000000001' }, 'body.capUsd'],
    ['an unknown scope', { scope: 'user_week' }, 'body.scope'],
    ['an unknown job type', { scope: 'job_type_day', subject: 'poem_generation' }, 'body.subject'],
    ['a user as the platform', { scope: 'platform_day', subject: 'carol' }, 'body.subject'],
    ['an empty subject', { subject: '' }, 'body.subject'],
  ])('refuses %s with 400 VALIDATION_FAILED naming the field, writing nothing', async (_, change, path) => {
    const res = await admin('PUT /admin-api/ai/budgets/caps', { body: { scope: 'user_day', subject: 'carol', capUsd: '1', ...change } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(await countRows('SpendCap')).toBe(0);
  });

  it("a cap lowered below today's spend stops new admissions at once and never cancels a running job", async () => {
    const running = await createFeynman('dana');
    expect(running.status).toBe(202);
    const job = await lockJob(getPrisma(), running.body.jobId, 'worker-1');
    // Its call holds $0.40 against every cap that applies, and $1.00 of calls settled earlier today.
    const hold = holdRequest({ clock: DATABASE_CLOCK, route: chat, defaults: DEFAULT_CAPS, costUsd: '0.40000000', job: { id: job.id, userId: 'dana', jobType: job.jobType, priority: job.priority } });
    expect((await reserve(hold)).kind).toBe('held');
    await (await rawDb()).query("UPDATE SpendCounter SET settledUsd = 1 WHERE scope = 'user_day' AND subject = 'dana'");

    const lowered = await admin('PUT /admin-api/ai/budgets/caps', { body: { scope: 'user_day', subject: 'dana', capUsd: '0.75' } });
    expect(lowered.body).toMatchObject({ usedUsd: '1.40000000', reached: true });
    const refused = await createFeynman('dana');
    expect([refused.status, refused.body.error.code]).toEqual([429, 'SPEND_LIMIT_REACHED']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await getPrisma().aiJob.count({ where: { userId: 'dana' } })).toBe(1);

    // The running job goes on: still running under its lease, nothing asked it to stop, and its call settles.
    expect(await getPrisma().aiJob.findUniqueOrThrow({ where: { id: job.id } })).toMatchObject({ lifecycleStatus: 'running', lockedBy: 'worker-1', cancelRequestedAt: null });
    await runAtomically(settlementStatements(hold.holdKey, { tokens: 500, costUsd: '0.30000000' }));
    const own = await invoke(userHandler, apiEvent('GET /api/ai/spend', { claims: userClaims('dana') }));
    expect(userSpendResponseSchema.parse(own.body).spend[0]).toMatchObject({ scope: 'user_day', settledUsd: '1.30000000', reservedUsd: '0.00000000', capUsd: '0.75000000', reached: true });
  });
});

describe("the user's own spend", () => {
  it('shows today and this month against the caps that apply, and when each resets', async () => {
    await spent('user_month', 'erin', '4.00000000');
    const res = await invoke(userHandler, apiEvent('GET /api/ai/spend', { claims: userClaims('erin') }));
    expect(res.status).toBe(200);
    const now = await dbNow();
    expect(userSpendResponseSchema.parse(res.body).spend).toEqual([
      expect.objectContaining({ scope: 'user_day', subject: 'erin', capUsd: '2.00000000', usedUsd: '0.00000000', reached: false,
        resetsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString() }),
      expect.objectContaining({ scope: 'user_month', capUsd: '20.00000000', usedUsd: '4.00000000',
        resetsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString() }),
    ]);
  });

  it('takes no query parameters, and the admin routes are admins\' only', async () => {
    expect((await invoke(userHandler, apiEvent('GET /api/ai/spend', { claims: userClaims('erin'), query: { userId: 'alice' } }))).status).toBe(400);
    for (const route of ADMIN_ROUTES.filter((r) => r.path.startsWith('/admin-api/ai/budgets'))) {
      const res = await invoke(adminHandler, apiEvent(routeKeyOf(route), { claims: userClaims('erin') }));
      expect([route.operationId, res.status]).toEqual([route.operationId, 403]);
    }
  });
});
