/**
 * The CLI's budget commands against the running local runtime, over HTTP: an admin sees limits, minute windows,
 * cooldowns and spend against caps, and sets and resets limits and caps; a user sees their own spend; bad usage
 * is explained before any request, bad values by the API's 400 naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetsResponseSchema, modelCapacitySchema } from '../../lib/api/budget-schemas.ts';
import { DATABASE_CLOCK } from '../../lib/capacity/db-clock.ts';
import { cooldownStatement } from '../../lib/capacity/settle-statements.ts';
import { getSqlPool } from '../../lib/db/sql-pool.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';
import { runCli } from '../helpers/cli-run.ts';

let e: E2e;
let user: string;
let admin: string;
beforeAll(async () => {
  e = await startE2e();
  [user, admin] = await Promise.all([e.token('cli-budget-user'), e.token('cli-budget-admin', { admin: true })]);
});
afterAll(async () => e.stop());

const cli = (args: string[], token = admin) => runCli(e.runtime.url, args, token);
const reasoner = { provider: 'mock', model: 'mock-reasoner' };

describe('cli budgets', () => {
  it('shows every model with its window, calls in flight and limits, a cooldown until when, and the spend against caps', async () => {
    // The reaper and consumers of the runtime write this model's row too; a cooldown is what a 429 would set.
    await getSqlPool().query("INSERT IGNORE INTO ProviderLimit (provider, model, rpm, tpm, maxInFlight, source, updatedAt) VALUES ('mock', 'mock-reasoner', 100000, 1000000000, 10000, 'config', UTC_TIMESTAMP(3))");
    const cool = cooldownStatement(reasoner, 600_000, DATABASE_CLOCK);
    await getSqlPool().query(cool.sql, cool.values);
    const text = await cli(['budgets']);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/mock\/mock-chat +requests \d+\/[\d,]+ +tokens [\d,]+\/[\d,]+ +in flight \d+\/10,000 +limits rpm 100,000/);
    expect(text.out).toMatch(/mock\/mock-reasoner .* COOLDOWN until \S+Z \(admitting 50% of its limits\)/);
    expect(text.out).toMatch(/Cooldowns: mock\/mock-reasoner until /);
    expect(text.out).toMatch(/platform today +\$0\.00 of \$100\.00 \(0\.0%\) \[config\] +resets \S+T00:00:00\.000Z/);
    const json = budgetsResponseSchema.parse(JSON.parse((await cli(['budgets', '--json'])).out));
    expect(json.models.find((m) => m.model === 'mock-reasoner')?.cooldownUntil).not.toBeNull();
    const ended = modelCapacitySchema.parse(JSON.parse((await cli(['end-cooldown', 'mock/mock-reasoner'])).out));
    expect(ended).toMatchObject({ ...reasoner, cooldownUntil: null, admittedPerMille: 1000 });
  });

  it('sets a limit (it stands until reset) and resets it; refuses bad usage before sending and bad values with the field', async () => {
    const set = await cli(['set-limit', 'mock/mock-chat', '--rpm', '50', '--max-in-flight', '5']);
    expect([set.code, JSON.parse(set.out)]).toEqual([0, expect.objectContaining({ rpm: 50, maxInFlight: 5, source: 'admin', updatedBy: 'admin:cli-budget-admin' })]);
    expect(JSON.parse((await cli(['reset-limit', 'mock/mock-chat'])).out)).toMatchObject({ rpm: 100_000, source: 'config' });
    for (const [args, message] of [
      [['set-limit', 'mock-chat', '--rpm', '5'], 'give the model as provider/model'],
      [['set-limit', 'mock/mock-chat'], 'give at least one of --rpm, --tpm, --max-in-flight'],
      [['set-limit', 'mock/mock-chat', '--rpm', 'lots'], '--rpm must be a whole number'],
      [['set-limit', 'mock/mock-chat', '--tpm=-5'], '--tpm must be a whole number'],
      [['set-limit', 'mock/mock-chat', '--tpm', '-5'], "Option '--tpm' argument is ambiguous"],
    ] as const) {
      const run = await cli([...args]);
      expect([run.code, run.err]).toEqual([2, expect.stringContaining(message)]);
    }
    const zero = await cli(['set-limit', 'mock/mock-chat', '--rpm', '0']);
    expect([zero.code, zero.err]).toEqual([1, expect.stringMatching(/VALIDATION_FAILED \(HTTP 400\).*body\.rpm/)]);
    const unknown = await cli(['set-limit', 'nobody/gpt-9', '--rpm', '5']);
    expect([unknown.code, unknown.err]).toEqual([1, expect.stringMatching(/VALIDATION_FAILED.*body\.model.*nobody\/gpt-9/)]);
  });

  it("sets and resets a user's cap; the user sees it in their own spend; non-admins cannot set or read others'", async () => {
    const set = await cli(['set-cap', 'user_day', 'cli-budget-user', '0.5']);
    expect([set.code, JSON.parse(set.out)]).toEqual([0, expect.objectContaining({ scope: 'user_day', capUsd: '0.50000000', capSource: 'subject' })]);
    expect((await cli(['budgets', '--user', 'cli-budget-user'])).out).toMatch(/User cli-budget-user:\n {2}today +\$0\.00 of \$0\.50 \(0\.0%\) \[subject\]/);
    const own = await cli(['spend'], user);
    expect(own.code).toBe(0);
    expect(own.out).toMatch(/today +\$0\.00 of \$0\.50 \(0\.0%\) \[subject\] +resets \S+T00:00:00\.000Z\n {2}this month +\$0\.00 of \$20\.00/);
    expect(JSON.parse((await cli(['reset-cap', 'user_day', 'cli-budget-user'])).out)).toMatchObject({ removed: true, use: { capUsd: '2.00000000', capSource: 'config' } });
    for (const [args, message] of [
      [['set-cap', 'user_week', 'x', '5'], 'the scope is one of'],
      [['set-cap', 'user_day'], 'the subject'],
      [['set-cap', 'user_day', 'x'], 'the cap in USD is required'],
      [['set-cap', 'user_day', 'x', 'lots'], 'the cap is a number of US dollars'],
    ] as const) {
      const run = await cli([...args]);
      expect([run.code, run.err]).toEqual([2, expect.stringContaining(message)]);
    }
    const unknownType = await cli(['set-cap', 'job_type_day', 'poem_generation', '5']);
    expect([unknownType.code, unknownType.err]).toEqual([1, expect.stringMatching(/VALIDATION_FAILED.*body\.subject/)]);
    for (const args of [['budgets'], ['set-cap', 'user_day', 'cli-budget-user', '100']]) {
      const forbidden = await cli(args, user);
      expect([forbidden.code, forbidden.err]).toEqual([1, expect.stringContaining('FORBIDDEN')]);
    }
  });
});
