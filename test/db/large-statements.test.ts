/**
 * A connection that sent a statement over 16 KB (where RDS Proxy pins a session for the rest of its life) is
 * closed after it, on the raw pool and on Prisma's: the server's process list shows the connection gone, the
 * work it did committed or rolled back as a whole, and a small statement keeps its pooled connection. The
 * size bound is checked against the statement text the server received.
 */
import fc from 'fast-check';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient, type PrismaDb } from '../../lib/db/client.ts';
import { PROXY_PIN_STATEMENT_BYTES, sentTextBytes } from '../../lib/db/large-statements.ts';
import { createSqlPool, runAtomically, type SqlPool } from '../../lib/db/sql-pool.ts';
import { rawDb } from '../helpers/db.ts';

/** This worker's database, through pools of ONE connection, so "the same connection again" is observable. */
function oneConnectionUrl(): string {
  const url = new URL(process.env.DATABASE_URL ?? '');
  url.searchParams.set('connectionLimit', '1');
  return url.toString();
}

const BIG = 'x'.repeat(PROXY_PIN_STATEMENT_BYTES + 1);
const table = `large_statements_${process.pid}`;
let admin: mysql.Connection;
let pool: SqlPool;
let prisma: PrismaDb;

beforeAll(async () => {
  admin = await rawDb();
  await admin.query(`CREATE TABLE IF NOT EXISTS \`${table}\` (id INT PRIMARY KEY, v LONGTEXT NOT NULL)`);
  pool = createSqlPool(oneConnectionUrl());
  prisma = createPrismaClient(oneConnectionUrl());
});

afterAll(async () => {
  await pool?.end();
  await prisma?.$disconnect();
  await admin?.query(`DROP TABLE IF EXISTS \`${table}\``);
});

async function connectionOpen(id: number): Promise<boolean> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ?', [id]);
  return Number(rows[0]?.n) > 0;
}

/** Waits (a condition, never a fixed sleep) until the server no longer lists connection `id`. */
async function closed(id: number): Promise<true> {
  const deadline = Date.now() + 10_000;
  while (await connectionOpen(id)) {
    if (Date.now() > deadline) throw new Error(`connection ${id} is still open`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

const idOf = (rows: unknown) => Number((rows as { id: number | bigint }[])[0]!.id);

describe('the size bound', () => {
  it('is never below the statement text the server received, and at most 2 bytes per value above it for text', async () => {
    const sql = 'SELECT LENGTH(INFO) AS n FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID() AND COALESCE(?, 1) IS NOT NULL';
    await fc.assert(fc.asyncProperty(
      fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', "'", '"', '\\', '\0', '\n', '?', ';'), maxLength: 300 }),
      async (value) => {
        const [row] = (await pool.query(sql, [value])) as { n: number }[];
        const bound = sentTextBytes(sql, [value]);
        expect(bound).toBeGreaterThanOrEqual(Number(row!.n));
        expect(bound - Number(row!.n)).toBeLessThanOrEqual(2);
      },
    ), { numRuns: 60 });
    for (const value of [42, 2n ** 60n, true, null, new Date(), Buffer.from([0, 39, 92, 34, 255]), { a: "it's" }, [1, 'two']]) {
      const [row] = (await pool.query(sql, [value])) as { n: number }[];
      expect(sentTextBytes(sql, [value])).toBeGreaterThanOrEqual(Number(row!.n));
    }
  });
});

describe('raw pool', () => {
  it('keeps its connection for small statements and closes the one that sent a large statement', async () => {
    const first = idOf(await pool.query('SELECT CONNECTION_ID() AS id'));
    expect(idOf(await pool.query('SELECT CONNECTION_ID() AS id'))).toBe(first);
    const big = idOf(await pool.query('SELECT CONNECTION_ID() AS id, LENGTH(?) AS n', [BIG]));
    expect(big).toBe(first); // the pool's one connection, taken for the large statement
    expect(await closed(big)).toBe(true);
    const next = idOf(await pool.query('SELECT CONNECTION_ID() AS id'));
    expect(next).not.toBe(big);
    expect(idOf(await pool.query('SELECT CONNECTION_ID() AS id'))).toBe(next);
  });

  it('keeps the connection of a statement just under the limit (5,000 three-byte characters: 15,000 bytes)', async () => {
    const first = idOf(await pool.query('SELECT CONNECTION_ID() AS id'));
    const near = '€'.repeat(5_000);
    const sql = 'SELECT CONNECTION_ID() AS id, LENGTH(?) AS n';
    expect(sentTextBytes(sql, [near])).toBeLessThanOrEqual(PROXY_PIN_STATEMENT_BYTES);
    expect(idOf(await pool.query(sql, [near]))).toBe(first);
    expect(idOf(await pool.query('SELECT CONNECTION_ID() AS id'))).toBe(first);
  });

  it('commits a large one-round-trip transaction, then closes its connection', async () => {
    const id = idOf(await pool.query('SELECT CONNECTION_ID() AS id'));
    await runAtomically([{ sql: `INSERT INTO \`${table}\` (id, v) VALUES (?, ?)`, values: [1, BIG] }], pool);
    expect(await closed(id)).toBe(true);
    const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT LENGTH(v) AS n FROM \`${table}\` WHERE id = 1`);
    expect(Number(rows[0]?.n)).toBe(BIG.length);
  });

  it('rolls a failing large transaction back whole, and closes its connection', async () => {
    const id = idOf(await pool.query('SELECT CONNECTION_ID() AS id'));
    await expect(runAtomically([
      { sql: `INSERT INTO \`${table}\` (id, v) VALUES (?, ?)`, values: [2, BIG] },
      { sql: `INSERT INTO \`${table}\` (id, v) VALUES (?, ?)`, values: [2, 'duplicate key'] },
    ], pool)).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    expect(await closed(id)).toBe(true);
    const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${table}\` WHERE id = 2`);
    expect(Number(rows[0]?.n)).toBe(0);
  });

  it('closes a held connection at its release when one of its statements was large, not before', async () => {
    const conn = await pool.getConnection();
    const id = idOf(await conn.query('SELECT CONNECTION_ID() AS id'));
    await conn.query(`INSERT INTO \`${table}\` (id, v) VALUES (?, ?)`, [3, BIG]);
    expect(idOf(await conn.query('SELECT CONNECTION_ID() AS id'))).toBe(id); // usable until released
    await conn.release();
    expect(await closed(id)).toBe(true);
  });
});

describe('Prisma client', () => {
  it('keeps its connection for small statements and closes the one that sent a large statement', async () => {
    const first = idOf(await prisma.$queryRaw`SELECT CONNECTION_ID() AS id`);
    expect(idOf(await prisma.$queryRaw`SELECT CONNECTION_ID() AS id`)).toBe(first);
    const big = idOf(await prisma.$queryRaw`SELECT CONNECTION_ID() AS id, LENGTH(${BIG}) AS n`);
    expect(await closed(big)).toBe(true);
    const next = idOf(await prisma.$queryRaw`SELECT CONNECTION_ID() AS id`);
    expect(next).not.toBe(big);
  });

  it('commits a transaction with a large statement, then closes its connection; a small transaction keeps it', async () => {
    const small = await prisma.$transaction(async (tx) => idOf(await tx.$queryRaw`SELECT CONNECTION_ID() AS id`));
    expect(idOf(await prisma.$queryRaw`SELECT CONNECTION_ID() AS id`)).toBe(small);
    const id = await prisma.$transaction(async (tx) => {
      const own = idOf(await tx.$queryRaw`SELECT CONNECTION_ID() AS id`);
      await tx.$executeRawUnsafe(`INSERT INTO \`${table}\` (id, v) VALUES (?, ?)`, 4, BIG);
      return own;
    });
    expect(await closed(id)).toBe(true);
    const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT LENGTH(v) AS n FROM \`${table}\` WHERE id = 4`);
    expect(Number(rows[0]?.n)).toBe(BIG.length);
  });
});
