/**
 * A held batch of 500 rows settles within RDS Proxy's 16 KB per statement, counted in bytes as sent, even when
 * every failed row carries an error text of its own in 3-byte UTF-8 (lib/outbox/held-claim.ts): the settle is then
 * split into several queries on the claim's connection, in its one transaction, and that connection goes back to
 * the pool instead of being closed as a pinned one. Checked on what the server received (general log, a database
 * user of this test's own).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlPool, type SqlPool } from '../../lib/db/sql-pool.ts';
import { claimDueOutboxBatch, settleHeldBatch } from '../../lib/outbox/held-claim.ts';
import { loggedUser } from '../helpers/general-log.ts';
import { checkPinning, MAX_STATEMENT_BYTES } from '../helpers/pinning-rules.ts';
import { insertQueuedJobsWithEvents, outboxRows } from '../helpers/outbox-factories.ts';

let session: Awaited<ReturnType<typeof loggedUser>>;
let sql: SqlPool;

beforeAll(async () => {
  session = await loggedUser(process.env.DATABASE_URL ?? '', `settle-size:${process.pid}:${Date.now()}`);
  // One connection: "the claim's connection went back to the pool" is the same connection id afterwards.
  const url = new URL(session.url);
  url.searchParams.set('connectionLimit', '1');
  sql = createSqlPool(url.toString());
});

afterAll(async () => {
  await sql?.end();
  await session?.release();
});

const connectionId = async () => Number(((await sql.query('SELECT CONNECTION_ID() AS id')) as { id: number }[])[0]!.id);

describe('settling a held batch of 500 rows', () => {
  it('sends no statement over 16 KB as sent, with 300 distinct error texts in Japanese, and keeps its connection', { timeout: 60_000 }, async () => {
    await insertQueuedJobsWithEvents(500);
    const before = await connectionId();
    const now = new Date();
    const batch = await claimDueOutboxBatch(sql, { holder: 'scheduled:size', now, leaseUntil: new Date(now.getTime() + 60_000) }, 500, 60_000);
    expect(batch.rows).toHaveLength(500);
    const ids = batch.rows.map((r) => r.id);
    // Each failed send has its own error (as SQS reports one per entry), over the 1,024 characters kept.
    const retries = ids.slice(200).map((id, i) => ({ ids: [id], availableAt: new Date(now.getTime() + 5_000), error: `送信に失敗しました ${i}: ${'漢字'.repeat(600)}` }));

    const counts = await settleHeldBatch(batch, { published: ids.slice(0, 200), retries, handOff: [] }, now);

    expect(counts).toEqual({ published: 200, retried: 300, handedOff: 0 });
    const rows = new Map((await outboxRows(ids)).map((r) => [r.id, r]));
    for (const id of ids.slice(0, 200)) expect(rows.get(id)).toMatchObject({ status: 'published', lockedBy: 'scheduled:size' });
    retries.forEach((retry) => expect(rows.get(retry.ids[0]!)).toMatchObject({ status: 'pending', attemptCount: 1, lastError: retry.error.slice(0, 1024) }));

    const logged = (await session.rows()).filter((r) => r.command === 'Query');
    const largest = Math.max(...logged.map((r) => Buffer.byteLength(r.argument)));
    expect(largest).toBeLessThanOrEqual(MAX_STATEMENT_BYTES);
    expect(logged.filter((r) => r.argument.includes('attemptCount = attemptCount + 1')).length).toBeGreaterThan(1);
    expect(checkPinning(logged).violations).toEqual([]);
    expect(await connectionId()).toBe(before);
  });
});
