/**
 * The database connections refuse lossy text: a lone surrogate, which the mariadb driver would encode as `?`,
 * is refused by the raw pool and by Prisma's adapter with IllFormedTextError; every well-formed string —
 * U+0000, U+FFFF, 4-byte emoji, combining and bidirectional marks — round-trips byte for byte through both.
 * The server half: utf8mb4 connections and a strict sql_mode, with no session SET of ours.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createPrismaClient } from '../../lib/db/client.ts';
import { getSqlPool } from '../../lib/db/sql-pool.ts';
import { IllFormedTextError, isIllFormedTextError } from '../../lib/db/text-guard.ts';

const prisma = createPrismaClient(process.env.DATABASE_URL ?? '');
afterAll(async () => {
  await prisma.$disconnect();
});

const WELL_FORMED = ['nul\u0000byte', 'non\uFFFFchar', 'emoji \u{1F600}\u{1F9D1}\u200D\u{1F4BB}', 'e\u0301\u0302 combining', '\u202Eltr\u200F rtl \u2067x\u2069', '\u{10FFFF}'];
const ILL_FORMED = ['lone \uD800 high', 'lone \uDC00 low', 'reversed \uDC00\uD800', 'end \uD83D'];

/** The test reads and writes a throwaway table with a utf8mb4_bin column. */
async function withTable<T>(fn: (table: string) => Promise<T>): Promise<T> {
  const table = `text_guard_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  const pool = getSqlPool();
  await pool.query(`CREATE TABLE \`${table}\` (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, l VARCHAR(8) CHARACTER SET latin1)`);
  try {
    return await fn(table);
  } finally {
    await pool.query(`DROP TABLE \`${table}\``);
  }
}

describe('raw pool', () => {
  it.each(WELL_FORMED)('round-trips %j exactly', async (text) => {
    await withTable(async (t) => {
      const pool = getSqlPool();
      await pool.query(`INSERT INTO \`${t}\` (v) VALUES (?)`, [text]);
      const rows = (await pool.query(`SELECT v FROM \`${t}\` WHERE v = ?`, [text])) as { v: string }[];
      expect(rows.map((r) => r.v)).toEqual([text]);
    });
  });

  it.each(ILL_FORMED)('refuses %j on the pool and on a held connection, writing nothing', async (text) => {
    await withTable(async (t) => {
      const pool = getSqlPool();
      await expect(pool.query(`INSERT INTO \`${t}\` (v) VALUES (?)`, [text])).rejects.toBeInstanceOf(IllFormedTextError);
      const conn = await pool.getConnection();
      try {
        await expect(conn.query(`INSERT INTO \`${t}\` (v) VALUES (?)`, [[text]])).rejects.toBeInstanceOf(IllFormedTextError);
      } finally {
        await conn.release();
      }
      expect(await pool.query(`SELECT COUNT(*) AS n FROM \`${t}\``)).toEqual([{ n: 0 }]);
    });
  });
});

describe('Prisma client', () => {
  it.each(WELL_FORMED)('round-trips %j exactly', async (text) => {
    await withTable(async (t) => {
      await prisma.$executeRawUnsafe(`INSERT INTO \`${t}\` (v) VALUES (?)`, text);
      const rows = await prisma.$queryRawUnsafe<{ v: string }[]>(`SELECT v FROM \`${t}\` WHERE v = ?`, text);
      expect(rows.map((r) => r.v)).toEqual([text]);
    });
  });

  it.each(ILL_FORMED)('refuses %j, also inside a transaction, writing nothing', async (text) => {
    await withTable(async (t) => {
      const refused = (p: Promise<unknown>) => p.then(() => false, (err: unknown) => isIllFormedTextError(err));
      expect(await refused(prisma.$executeRawUnsafe(`INSERT INTO \`${t}\` (v) VALUES (?)`, text))).toBe(true);
      expect(await refused(prisma.$transaction(async (tx) => tx.$executeRawUnsafe(`INSERT INTO \`${t}\` (v) VALUES (?)`, text)))).toBe(true);
      expect(await refused(prisma.aiJob.findMany({ where: { userId: text } }))).toBe(true);
      expect(await getSqlPool().query(`SELECT COUNT(*) AS n FROM \`${t}\``)).toEqual([{ n: 0 }]);
    });
  });
});

describe('the server side, without any session SET', () => {
  it('connections speak utf8mb4 and run a strict sql_mode, so an unstorable character is an error, never ?', async () => {
    for (const rows of [
      (await getSqlPool().query('SELECT @@character_set_client AS cs, @@character_set_connection AS cc, @@sql_mode AS mode')) as { cs: string; cc: string; mode: string }[],
      await prisma.$queryRawUnsafe<{ cs: string; cc: string; mode: string }[]>('SELECT @@character_set_client AS cs, @@character_set_connection AS cc, @@sql_mode AS mode'),
    ]) {
      expect(rows[0]).toMatchObject({ cs: 'utf8mb4', cc: 'utf8mb4' });
      expect(rows[0]!.mode.split(',')).toContain('STRICT_TRANS_TABLES');
    }
    await withTable(async (t) => {
      await expect(getSqlPool().query(`INSERT INTO \`${t}\` (l) VALUES (?)`, ['\u{1F600}'])).rejects.toMatchObject({ errno: 1366 });
    });
  });
});
