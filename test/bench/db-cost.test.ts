/**
 * The database side of bench:peers and bench:capacity on MariaDB: the rows a run writes and the redo it makes
 * are read from the server's own counters (Handler_* here, as MariaDB 10.11 has no Innodb_rows_*). The
 * counters are server-wide and other test workers share the server, so the checks are lower bounds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMariadbWrites } from '../../bench/peers/db-cost.ts';
import { rawDb } from '../helpers/db.ts';

const TABLE = 'bench_db_cost_probe';

beforeAll(async () => {
  await (await rawDb()).query(`CREATE TABLE IF NOT EXISTS ${TABLE} (id INT PRIMARY KEY AUTO_INCREMENT, v INT NOT NULL)`);
});

afterAll(async () => {
  await (await rawDb()).query(`DROP TABLE IF EXISTS ${TABLE}`);
});

describe('the MariaDB writes meter', () => {
  it('counts the rows a window inserted, updated and deleted, and the redo it wrote', async () => {
    const db = await rawDb();
    const meter = await startMariadbWrites(db);
    await db.query(`INSERT INTO ${TABLE} (v) VALUES (1), (2), (3), (4), (5)`);
    await db.query(`UPDATE ${TABLE} SET v = v + 10 WHERE v <= 2`);
    await db.query(`DELETE FROM ${TABLE} WHERE v = 5`);
    const { writes, source } = await meter.stop();

    expect(writes.inserted).toBeGreaterThanOrEqual(5);
    expect(writes.updated).toBeGreaterThanOrEqual(2);
    expect(writes.deleted).toBeGreaterThanOrEqual(1);
    expect(writes.commits).toBeGreaterThanOrEqual(3);
    expect(writes.logBytes).toBeGreaterThan(0);
    expect(source).toMatch(/server-wide/);
    const [[version]] = await db.query<import('mysql2/promise').RowDataPacket[]>('SELECT VERSION() AS v');
    if (String(version?.v).includes('MariaDB')) expect(source).toMatch(/Handler_write\/update\/delete, Innodb_lsn_current/);
  });
});
