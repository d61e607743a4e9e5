/**
 * The migrator at deploy time, through RDS Proxy: a database that starts accepting connections late (a fresh
 * cluster) is retried until it does, and no COM_CHANGE_USER is ever sent (checked in the server's general log,
 * on the rows of a database user of this test's own).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDatabaseUrl, withDatabase } from '../../lib/db/database-url.ts';
import { CONNECT_RETRY_MS, migrateDatabase, readMigrations } from '../../lib/db/migrator.ts';
import {
  adminConnection, createLoggedUser, dropLoggedUser, holdGeneralLog, logRowsOf, releaseGeneralLog, serverNow,
} from '../helpers/general-log.ts';
import { checkPinning, migratorThreads } from '../helpers/pinning-rules.ts';
import { freePort, waitFor } from '../helpers/ports.ts';

const serverUrl = process.env.DATABASE_URL ?? '';
const database = `aijobs_test_migproxy_${process.pid}_${Date.now().toString(36)}`;
const holder = `migrator-proxy:${process.pid}:${Date.now()}`;
let admin: mysql.Connection;
let user: { user: string; password: string };
const sockets = new Set<Socket>();
let late: Server | undefined;

beforeAll(async () => {
  admin = await adminConnection(serverUrl);
  user = await createLoggedUser(admin, database);
  await holdGeneralLog(admin, holder);
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => (late ? late.close(() => resolve()) : resolve()));
  await releaseGeneralLog(admin, holder).catch(() => undefined);
  await dropLoggedUser(admin, user.user).catch(() => undefined);
  await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.end();
});

/** A TCP relay on `port` to the real server: the "database" that starts accepting connections late. */
async function startRelay(port: number): Promise<Server> {
  const target = parseDatabaseUrl(serverUrl);
  const server = createServer((client) => {
    const upstream = createConnection(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => { client.destroy(); upstream.destroy(); });
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

describe('the migrator through a proxy at deploy time', () => {
  it('retries a database that is not reachable yet until it is, and never sends COM_CHANGE_USER', async () => {
    const port = await freePort();
    const url = new URL(withDatabase(serverUrl, database));
    Object.assign(url, { hostname: '127.0.0.1', port: String(port), username: user.user, password: user.password });
    const since = await serverNow(admin);
    const retries: unknown[] = [];
    const migrated = migrateDatabase(url.toString(), undefined, { connectRetryMs: CONNECT_RETRY_MS, onConnectRetry: (err) => retries.push(err) });

    // Nothing listens yet: the migrator keeps trying (connection refused) instead of failing the deploy.
    await waitFor(async () => retries.length >= 2, 'two refused connection attempts', 20_000);
    late = await startRelay(port);
    const result = await migrated;

    expect((retries[0] as { code?: string }).code).toBe('ECONNREFUSED');
    expect(result.created).toBe(true);
    expect(result.applied).toEqual((await readMigrations()).map((m) => m.name));
    const rows = await logRowsOf(admin, user.user, since);
    expect(rows.some((r) => r.argument.includes('_prisma_migrations'))).toBe(true);
    expect(rows.filter((r) => r.command === 'Change user')).toEqual([]);
    // Its named lock is allowed (deploy time, one session); nothing else that pins.
    expect(checkPinning(rows, migratorThreads(rows)).violations).toEqual([]);
  });

  it('fails at once on an error retrying cannot fix (bad credentials)', async () => {
    const url = new URL(withDatabase(serverUrl, database));
    Object.assign(url, { username: user.user, password: 'wrong' });
    const started = Date.now();
    await expect(migrateDatabase(url.toString(), undefined, { connectRetryMs: CONNECT_RETRY_MS, onConnectRetry: () => { throw new Error('retried'); } }))
      .rejects.toMatchObject({ code: 'ER_ACCESS_DENIED_ERROR' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
