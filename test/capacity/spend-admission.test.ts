/**
 * The spending caps at create (lib/spend/admission.ts): the creating transaction's guard asks ONE `EXISTS` over
 * the user's counters (`spendReachedSql`), and a refusal is explained scope by scope (`spendReachedConditions`).
 * Both must say the same thing in every state of counters, caps, configured defaults and credentials.
 */
import { describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { spendReachedConditions, spendReachedSql, type CreateCredential, type SpendAdmission } from '../../lib/spend/admission.ts';
import { SPEND_SCOPES, type SpendCapDefaults } from '../../lib/spend/caps.ts';
import { fixedClock } from '../helpers/capacity.ts';
import { rawDb } from '../helpers/db.ts';

const NOW = '2026-12-06T12:00:00.000Z';
const PERIOD = { job_type_day: '2026-12-06', platform_day: '2026-12-06', user_day: '2026-12-06', user_month: '2026-12-01' } as const;
const SUBJECT = { job_type_day: 'quiz_generation', platform_day: '*', user_day: 'user-1', user_month: 'user-1' } as const;

/** A small deterministic generator (the same states on every run). */
function generator(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return (s >>> 16) % n;
  };
}

async function setState(db: mysql.Connection, pick: (n: number) => number, activeKey: boolean): Promise<void> {
  await db.query('DELETE FROM SpendCounter');
  await db.query('DELETE FROM SpendCap');
  await db.query('DELETE FROM UserModelCredential');
  const usd = ['0.50000000', '1.00000000', '2.00000000', '5.00000000'];
  for (const scope of SPEND_SCOPES) {
    const period = pick(4) === 0 ? '2026-11-01' : PERIOD[scope]; // sometimes only an older period's counter
    if (pick(4) > 0) await db.query('INSERT INTO SpendCounter (scope, subject, periodStart, reservedUsd, settledUsd) VALUES (?, ?, ?, ?, ?)', [scope, SUBJECT[scope], period, usd[pick(2)], usd[pick(4)]]);
    if (pick(3) === 0) await db.query("INSERT INTO SpendCap (scope, subject, capUsd, source, updatedAt) VALUES (?, ?, ?, 'admin', NOW(3))", [scope, SUBJECT[scope], usd[pick(4)]]);
    if (pick(3) === 0 && scope !== 'platform_day') await db.query("INSERT INTO SpendCap (scope, subject, capUsd, source, updatedAt) VALUES (?, '*', ?, 'admin', NOW(3))", [scope, usd[pick(4)]]);
  }
  if (activeKey) {
    await db.query(`INSERT INTO UserModelCredential (id, userId, provider, keyCiphertext, dataKeyCiphertext, iv, authTag, kmsKeyId, fingerprint, status, createdAt, updatedAt)
      VALUES ('01KEY', 'user-1', 'deepseek', 'x', 'x', 'x', 'x', 'k', 'f', 'active', NOW(3), NOW(3))`);
  }
}

describe('spending caps at create: the guard and the explanation agree', () => {
  it('the single EXISTS is true exactly when some per-scope condition is, over 240 states of counters, caps and keys', { timeout: 60_000 }, async () => {
    const db = await rawDb();
    const pick = generator(29);
    const credentials: CreateCredential[] = ['platform', 'user_key', 'user_key_if_stored'];
    let reachedStates = 0;
    for (let i = 0; i < 240; i += 1) {
      const activeKey = pick(2) === 0;
      await setState(db, pick, activeKey);
      const configured = ['0.75000000', '2.00000000', null] as const;
      const defaults = Object.fromEntries(SPEND_SCOPES.map((scope) => [scope, configured[pick(3)]])) as unknown as SpendCapDefaults;
      const admission: SpendAdmission = { userId: 'user-1', jobType: 'quiz_generation', credential: credentials[i % 3]!, defaults, clock: fixedClock(NOW) };
      const one = spendReachedSql(admission);
      const each = spendReachedConditions(admission);
      const [[row]] = await db.query<mysql.RowDataPacket[]>(
        `SELECT ${one.sql} AS guard, ${each.map((c) => `COALESCE(${c.sql}, FALSE) AS \`${c.scope}\``).join(', ')}`,
        [...one.values, ...each.flatMap((c) => c.values)],
      );
      const anyScope = SPEND_SCOPES.some((scope) => Number(row![scope]) === 1);
      expect(Number(row!.guard) === 1, `state ${i}: ${JSON.stringify({ admission: { ...admission, clock: undefined }, row })}`).toBe(anyScope);
      if (anyScope) reachedStates += 1;
    }
    // The states cover both answers well.
    expect(reachedStates).toBeGreaterThan(40);
    expect(reachedStates).toBeLessThan(200);
  });
});
