/**
 * Starts the local runtime as `npm start` does (lib/dev/start.ts: builds the console when stale, MariaDB,
 * fauxqs, the mock AI provider) on a free port against a fresh database, and hands its URL and database to
 * the specs through the environment. The teardown stops it with SIGINT and drops the database.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../../lib/db/database-url.ts';

const START = fileURLToPath(new URL('../../lib/dev/start.ts', import.meta.url));

export default async function globalSetup(): Promise<() => Promise<void>> {
  const database = `aijobs_browser_${process.pid}`;
  const databaseUrl = withDatabase(databaseUrlFromEnv(), database);
  const child = spawn(process.execPath, ['--import', 'tsx', START], {
    env: { ...process.env, PORT: '0', DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let url: string | undefined;
  let sqsEndpoint: string | undefined;
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('console JavaScript') || line.startsWith('admin console')) console.log(line);
    sqsEndpoint ??= /^SQS \(fauxqs\) at (http:\/\/\S+);/.exec(line)?.[1];
    url = /^listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1];
    if (url) break;
  }
  if (!url) throw new Error('the local runtime exited before it was listening');
  child.stdout!.resume();
  process.env.CONSOLE_BASE_URL = url;
  process.env.CONSOLE_DATABASE_URL = databaseUrl;
  process.env.CONSOLE_SQS_ENDPOINT = sqsEndpoint ?? '';
  return async () => {
    child.kill('SIGINT');
    await exited;
    const s = parseDatabaseUrl(databaseUrl);
    const conn = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password });
    await conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await conn.end();
  };
}
