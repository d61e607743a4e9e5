/**
 * The per-user usage report at its largest, 1,000 users, with user ids in Japanese (3 bytes a character as sent):
 * its statements that list the users are far over the 16 KB at which RDS Proxy pins a session (about 190 KB
 * here), so the connection that sent each is closed after it (lib/db/large-statements.ts) and never serves
 * another request pinned. Checked on what the server received (general log, a database user of this test's own),
 * and the report is still exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient, type PrismaDb } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { usageReport } from '../../lib/rollups/usage-report.ts';
import { rawDb } from '../helpers/db.ts';
import { insertJob } from '../helpers/factories.ts';
import { loggedUser } from '../helpers/general-log.ts';
import { checkPinning, MAX_STATEMENT_BYTES } from '../helpers/pinning-rules.ts';

let session: Awaited<ReturnType<typeof loggedUser>>;
let db: PrismaDb;

beforeAll(async () => {
  session = await loggedUser(process.env.DATABASE_URL ?? '', `usage-size:${process.pid}:${Date.now()}`);
  db = createPrismaClient(session.url);
});

afterAll(async () => {
  await db?.$disconnect();
  await session?.release();
});

/** A user id of 64 characters, 60 of them 3 bytes long in UTF-8. */
const userIdOf = (i: number) => `${'利用者'.repeat(20)}${String(i).padStart(4, '0')}`;

describe('the per-user usage report of 1,000 users with multi-byte ids', () => {
  it('is exact, and every statement over 16 KB as sent is the last its connection sends', { timeout: 60_000 }, async () => {
    const job = await insertJob();
    const now = new Date();
    const rows = Array.from({ length: 1_000 }, (_, i) => [
      newId(), job.id, userIdOf(i), 1, 'deepseek', 'deepseek-chat', 'platform_key', 10, 5, 15, (i + 1) / 1000, 'p1', 100, now,
    ]);
    await (await rawDb()).query(
      `INSERT INTO AiUsageLog (id, jobId, userId, attemptNo, provider, model, credentialMode, promptTokens, completionTokens,
         totalTokens, costUsd, priceVersion, latencyMs, createdAt) VALUES ?`, [rows],
    );

    const report = await usageReport(db, { perUser: true, users: 1_000 }, now);

    expect(report.userCount).toBe(1_000);
    expect(new Set(report.rows.map((r) => r.userId))).toEqual(new Set(rows.map((r) => r[2])));
    expect(report.total).toMatchObject({ calls: 1_000, totalTokens: 15_000 });
    const logged = await session.rows();
    const large = logged.filter((r) => r.command === 'Query' && Buffer.byteLength(r.argument) > MAX_STATEMENT_BYTES);
    expect(large.length).toBeGreaterThan(0);
    expect(Math.max(...large.map((r) => Buffer.byteLength(r.argument)))).toBeGreaterThan(150_000);
    expect(checkPinning(logged).violations).toEqual([]);
  });
});
