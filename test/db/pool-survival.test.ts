/**
 * Both pools (the raw pool, lib/db/sql-pool.ts, and the one under Prisma's adapter, lib/db/client.ts) survive
 * their idle connections being closed under them, as RDS Proxy does after its IdleClientTimeout and as a frozen
 * Lambda container finds on thawing: the next query runs on a new connection instead of failing the request.
 *
 * The freeze, for real: the pooled connections are killed server-side (KILL CONNECTION) by a child process the
 * test runs synchronously, so the test's event loop is blocked meanwhile and has not seen the connections close
 * when it asks for the next query (as a thawed Lambda has not); the clock then moves on by the time the container
 * was frozen. What saves the query is the pool's validation of a connection idle over
 * `POOL_VALIDATION_AFTER_IDLE_MS` (a ping) before handing it out, nothing of our own.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPrismaClient, type PrismaDb } from '../../lib/db/client.ts';
import { parseDatabaseUrl, POOL_VALIDATION_AFTER_IDLE_MS } from '../../lib/db/database-url.ts';
import { createSqlPool, withSqlConnection, type SqlPool } from '../../lib/db/sql-pool.ts';
import { adminConnection, createLoggedUser, dropLoggedUser } from '../helpers/general-log.ts';

const KILLER = fileURLToPath(new URL('../helpers/kill-connections.mjs', import.meta.url));
const serverUrl = process.env.DATABASE_URL ?? '';
let admin: mysql.Connection;
let user: { user: string; password: string };
let userUrl: string;
let raw: SqlPool;
let prisma: PrismaDb;

beforeAll(async () => {
  admin = await adminConnection(serverUrl);
  user = await createLoggedUser(admin, parseDatabaseUrl(serverUrl).database);
  const url = new URL(serverUrl);
  url.username = user.user;
  url.password = user.password;
  userUrl = url.toString();
  raw = createSqlPool(userUrl);
  prisma = createPrismaClient(userUrl);
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  await raw?.end();
  await prisma?.$disconnect();
  await dropLoggedUser(admin, user.user).catch(() => undefined);
  await admin?.end();
});

const idOf = (rows: unknown) => Number((rows as { id: number | bigint }[])[0]!.id);

/** Every connection of this test's user, by id. */
async function openConnections(): Promise<number[]> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>('SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?', [user.user]);
  return rows.map((r) => Number(r.ID));
}

/** Kills `ids` and returns once the server lists none of them, with this process's event loop blocked throughout. */
function killWhileFrozen(ids: number[]): void {
  const admin = new URL(serverUrl);
  admin.pathname = '/';
  execFileSync(process.execPath, [KILLER, admin.toString(), ...ids.map(String)], { stdio: 'inherit' });
}

describe('pooled connections closed under the pools while idle', () => {
  it('the next query through each pool runs on a new connection and succeeds', async () => {
    const rawBefore = idOf(await raw.query('SELECT CONNECTION_ID() AS id'));
    const prismaBefore = idOf(await prisma.$queryRawUnsafe('SELECT CONNECTION_ID() AS id'));
    const pooled = await openConnections();
    expect(pooled).toEqual(expect.arrayContaining([rawBefore, prismaBefore]));

    killWhileFrozen(pooled);
    // The container thaws minutes later: the pool's clock says so, its sockets' closing is still unread.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10 * 60_000 });
    const rawAfter = raw.query('SELECT CONNECTION_ID() AS id');
    const prismaAfter = prisma.$queryRawUnsafe('SELECT CONNECTION_ID() AS id');

    const [r, p] = await Promise.all([rawAfter, prismaAfter]);
    expect(idOf(r)).not.toBe(rawBefore);
    expect(idOf(p)).not.toBe(prismaBefore);
    expect(pooled).not.toContain(idOf(r));
    expect(pooled).not.toContain(idOf(p));
  });

  it('a transaction that loses its connection mid-way fails, and is not run again behind the caller', async () => {
    const error = await withSqlConnection(raw, async (conn) => {
      await conn.query('START TRANSACTION');
      const id = idOf(await conn.query('SELECT CONNECTION_ID() AS id'));
      killWhileFrozen([id]);
      return conn.query('SELECT 1').then(() => null, (err: unknown) => err);
    });
    expect(error).toMatchObject({ fatal: true });
    // The pool goes on with a new connection.
    expect(idOf(await raw.query('SELECT CONNECTION_ID() AS id'))).toBeGreaterThan(0);
    expect(POOL_VALIDATION_AFTER_IDLE_MS).toBeLessThanOrEqual(1_000);
  });
});
