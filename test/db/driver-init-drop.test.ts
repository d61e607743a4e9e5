/**
 * A connection lost while the mariadb driver initialises it (its `SET time_zone`, sent on every new connection
 * because of `timezone: 'Z'`) fails the request that waited for it, and nothing else. mariadb 3.4.5 also left a
 * second, unhandled rejection of the same error (ER_WRONG_IANA_TIMEZONE), which ends a Node process, a Lambda
 * container included, on a database failover; patches/mariadb+3.4.5.patch applies the fix mariadb 3.5 made
 * (Prisma's adapter pins 3.4.5). The loss is real: a relay to the server closes both sockets when the client
 * sends that statement.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient } from '../../lib/db/client.ts';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';
import { createSqlPool } from '../../lib/db/sql-pool.ts';
import { startDroppingRelay, type DroppingRelay } from '../helpers/greeting-proxy.ts';

const unhandled: unknown[] = [];
const record = (reason: unknown) => { unhandled.push(reason); };
let relay: DroppingRelay;
let relayUrl: string;

beforeAll(async () => {
  const settings = parseDatabaseUrl(process.env.DATABASE_URL ?? '');
  relay = await startDroppingRelay({ host: settings.host, port: settings.port }, 'SET time_zone');
  const url = new URL(process.env.DATABASE_URL ?? '');
  url.hostname = '127.0.0.1';
  url.port = String(relay.port);
  // The request waits this long for a connection; on a loaded machine a handshake reaches `SET time_zone` well within it.
  url.searchParams.set('poolTimeoutMs', '3000');
  url.searchParams.set('connectTimeoutMs', '3000');
  relayUrl = url.toString();
  process.on('unhandledRejection', record);
});

afterEach(() => { unhandled.length = 0; });

afterAll(async () => {
  process.off('unhandledRejection', record);
  await relay?.close();
});

/** Lets Node report any rejection left unhandled by the turn that failed (it does so once microtasks drain). */
async function afterPendingRejections(): Promise<void> {
  for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

describe('a connection lost during the driver\'s initialisation', () => {
  it('the raw pool: the query fails with the pool\'s error, and no rejection is left unhandled', async () => {
    const pool = createSqlPool(relayUrl);
    const before = relay.drops();
    try {
      await expect(pool.query('SELECT 1')).rejects.toThrow(/pool timeout/);
      await afterPendingRejections();
      expect(relay.drops()).toBeGreaterThan(before);
      expect(unhandled).toEqual([]);
    } finally {
      await pool.end().catch(() => undefined);
    }
  });

  it('Prisma\'s adapter pool: the query fails, and no rejection is left unhandled', async () => {
    const prisma = createPrismaClient(relayUrl);
    const before = relay.drops();
    try {
      await expect(prisma.$queryRawUnsafe('SELECT 1')).rejects.toThrow();
      await afterPendingRejections();
      expect(relay.drops()).toBeGreaterThan(before);
      expect(unhandled).toEqual([]);
    } finally {
      await prisma.$disconnect().catch(() => undefined);
    }
  });
});
