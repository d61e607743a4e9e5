/**
 * How database errors are classified, as a table: the API's answer (503 with Retry-After, or 500) and the
 * engine's failure class (INFRASTRUCTURE: the attempt is given back; INTERNAL: it counts). Each error is the one
 * the real drivers report — the raw mariadb pool, Prisma's adapter and mysql2 — for an error packet with the errno,
 * SQLSTATE and message MySQL 8 or RDS Proxy sends (raised on the test server with SIGNAL, so the drivers parse a
 * real packet), and for a connection the server kills mid-query.
 */
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapError } from '../../lib/api/error-mapper.ts';
import { createPrismaClient, type PrismaDb } from '../../lib/db/client.ts';
import { createSqlPool, type SqlPool } from '../../lib/db/sql-pool.ts';
import { asJobFailure } from '../../lib/jobs/failures.ts';
import { rawDb } from '../helpers/db.ts';
import { adminConnection } from '../helpers/general-log.ts';

interface Row {
  from: string;
  errno: number;
  sqlState: string;
  message: string;
  api: 503 | 500;
  engine: 'INFRASTRUCTURE' | 'INTERNAL';
}

/** Error packets as RDS Proxy (troubleshooting page, MySQL) and MySQL 8 send them. */
const TABLE: Row[] = [
  { from: 'RDS Proxy', errno: 1105, sqlState: 'HY000', message: 'Unknown error', api: 503, engine: 'INFRASTRUCTURE' },
  { from: 'RDS Proxy', errno: 9501, sqlState: 'HY000', message: 'Timed-out waiting to acquire database connection', api: 503, engine: 'INFRASTRUCTURE' },
  { from: 'RDS Proxy', errno: 1040, sqlState: 'HY000', message: 'Number simultaneous connections exceeded (1000)', api: 503, engine: 'INFRASTRUCTURE' },
  { from: 'RDS Proxy', errno: 3159, sqlState: 'HY000', message: 'This RDS Proxy requires TLS connections.', api: 500, engine: 'INTERNAL' },
  { from: 'MySQL 8', errno: 4031, sqlState: 'HY000', message: 'The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior.', api: 503, engine: 'INFRASTRUCTURE' },
  { from: 'MySQL 8', errno: 1053, sqlState: '08S01', message: 'Server shutdown in progress', api: 503, engine: 'INFRASTRUCTURE' },
  { from: 'MySQL 8', errno: 1317, sqlState: '70100', message: 'Query execution was interrupted', api: 503, engine: 'INFRASTRUCTURE' },
  { from: 'MySQL 8', errno: 1040, sqlState: '08004', message: 'Too many connections', api: 503, engine: 'INFRASTRUCTURE' },
  { from: 'MySQL 8', errno: 1205, sqlState: 'HY000', message: 'Lock wait timeout exceeded; try restarting transaction', api: 503, engine: 'INTERNAL' },
  { from: 'MySQL 8', errno: 1213, sqlState: '40001', message: 'Deadlock found when trying to get lock; try restarting transaction', api: 503, engine: 'INTERNAL' },
  { from: 'MySQL 8', errno: 1064, sqlState: '42000', message: "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'SELECT 2' at line 1", api: 500, engine: 'INTERNAL' },
  { from: 'MySQL 8', errno: 1055, sqlState: '42000', message: "Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'x'; this is incompatible with sql_mode=only_full_group_by", api: 500, engine: 'INTERNAL' },
  { from: 'MySQL 8', errno: 3024, sqlState: 'HY000', message: 'Query execution was interrupted, maximum statement execution time exceeded', api: 500, engine: 'INTERNAL' },
  { from: 'MySQL 8', errno: 1062, sqlState: '23000', message: "Duplicate entry 'k' for key 'AiJob.AiJob_userId_jobType_idempotencyKey_key'", api: 500, engine: 'INTERNAL' },
];

const signal = (r: Row) => `SIGNAL SQLSTATE '${r.sqlState}' SET MYSQL_ERRNO = ${r.errno}, MESSAGE_TEXT = '${r.message.replaceAll("'", "''")}'`;

let raw: SqlPool;
let prisma: PrismaDb;
let my: mysql.Connection;
beforeAll(async () => {
  raw = createSqlPool(process.env.DATABASE_URL ?? '');
  prisma = createPrismaClient(process.env.DATABASE_URL ?? '');
  my = await rawDb();
});
afterAll(async () => {
  await raw?.end();
  await prisma?.$disconnect();
});

/** What `run` threw. */
async function thrown(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

const DRIVERS: Record<string, (sql: string) => Promise<unknown>> = {
  'mariadb (raw pool)': (sql) => raw.query(sql),
  'Prisma adapter': (sql) => prisma.$queryRawUnsafe(sql),
  mysql2: (sql) => my.query(sql),
};

describe('database errors, as each driver reports them', () => {
  for (const row of TABLE) {
    it(`${row.from} ${row.errno} (${row.sqlState}) → API ${row.api}, engine ${row.engine}`, async () => {
      for (const [driver, run] of Object.entries(DRIVERS)) {
        const err = await thrown(() => run(signal(row)));
        expect({ driver, api: mapError(err).status, engine: asJobFailure(err).code }).toEqual({ driver, api: row.api, engine: row.engine });
      }
    });
  }

  it('reports what the drivers give for errnos 4031 and 1105 (the codes the classification does not rely on)', async () => {
    const codes = async (errno: number) => (await Promise.all([DRIVERS['mariadb (raw pool)']!, DRIVERS.mysql2!].map(async (run) =>
      (await thrown(() => run(signal(TABLE.find((r) => r.errno === errno)!))) as { code?: string }).code)));
    // mariadb 3.4 names 4031 by MariaDB's meaning; mysql2 by MySQL 8's.
    expect(await codes(4031)).toEqual(['ER_REFERENCED_TRG_DOES_NOT_EXIST', 'ER_CLIENT_INTERACTION_TIMEOUT']);
    expect(await codes(1105)).toEqual(['ER_UNKNOWN_ERROR', 'ER_UNKNOWN_ERROR']);
  });

  it('a connection the server kills mid-query → API 503, engine INFRASTRUCTURE, on every driver (never errno 2006/2013)', async () => {
    const admin = await adminConnection(process.env.DATABASE_URL ?? '');
    const single = await (await import('mysql2/promise')).default.createConnection({ ...my.config, multipleStatements: false });
    try {
      // Each sleeper names itself: other test workers on the server may be sleeping too, and must not be killed.
      const sleeper = (driver: string) => `SELECT SLEEP(30) AS ${driver}_${process.pid}_${Date.now()}`;
      const runs: Record<string, (sql: string) => Promise<unknown>> = {
        mariadb: (sql) => raw.query(sql),
        prisma: (sql) => prisma.$queryRawUnsafe(sql),
        mysql2: (sql) => single.query(sql),
      };
      for (const [driver, run] of Object.entries(runs)) {
        const sql = sleeper(driver);
        const pending = thrown(() => run(sql));
        const victim = await waitForSleeper(admin, sql);
        await admin.query(`KILL CONNECTION ${victim}`);
        const err = (await pending) as { errno?: number; code?: string };
        expect({ driver, api: mapError(err).status, engine: asJobFailure(err).code }).toEqual({ driver, api: 503, engine: 'INFRASTRUCTURE' });
        expect([2006, 2013]).not.toContain(err.errno);
      }
    } finally {
      await admin.end();
      await single.end().catch(() => undefined);
    }
  });
});

/** The id of the connection running `sql` (a condition polled, never a fixed wait). */
async function waitForSleeper(admin: mysql.Connection, sql: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [rows] = await admin.query<mysql.RowDataPacket[]>('SELECT ID FROM information_schema.PROCESSLIST WHERE INFO = ?', [sql]);
    if (rows[0]) return Number(rows[0].ID);
    if (Date.now() > deadline) throw new Error(`no connection ran ${sql}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
