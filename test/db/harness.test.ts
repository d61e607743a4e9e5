import { describe, expect, it, inject } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';

describe('test harness', () => {
  it('gives this worker its own migrated database', async () => {
    const db = parseDatabaseUrl(process.env.DATABASE_URL ?? '').database;
    expect(db).toMatch(/^aijobs_test_/);
    const rows = await getPrisma().$queryRaw<{ n: bigint }[]>`SELECT COUNT(*) AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL`;
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);
  });

  it('exposes an SQS endpoint and an AWS endpoint on loopback', () => {
    expect(inject('sqsEndpoint')).toMatch(/^http:\/\//);
    expect(inject('awsEndpoint')).toMatch(/^http:\/\//);
  });
});
