/**
 * Starts the local runtime as `npm start` does (lib/dev/start.ts: builds the console when stale, MariaDB,
 * fauxqs, the mock AI provider) on a free port against a fresh database; `stop` ends it with SIGINT and drops
 * the database. Used by global-setup.ts (the runtime every spec shares) and by specs that need their own
 * configuration (oidc.spec.ts).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../../lib/db/database-url.ts';

const START = fileURLToPath(new URL('../../lib/dev/start.ts', import.meta.url));

export interface StartedRuntime {
  url: string;
  databaseUrl: string;
  sqsEndpoint: string | undefined;
  stop(): Promise<void>;
}

/** Starts a runtime with its own database `database` and extra environment `env`. */
export async function startRuntime(database: string, env: Record<string, string> = {}, echo = (_line: string) => {}): Promise<StartedRuntime> {
  const databaseUrl = withDatabase(databaseUrlFromEnv(), database);
  const child = spawn(process.execPath, ['--import', 'tsx', START], {
    env: { ...process.env, PORT: '0', DATABASE_URL: databaseUrl, ...env }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let url: string | undefined;
  let sqsEndpoint: string | undefined;
  for await (const line of createInterface({ input: child.stdout! })) {
    echo(line);
    sqsEndpoint ??= /^SQS \(fauxqs\) at (http:\/\/\S+);/.exec(line)?.[1];
    url = /^listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1];
    if (url) break;
  }
  if (!url) throw new Error('the local runtime exited before it was listening');
  child.stdout!.resume();
  return {
    url, databaseUrl, sqsEndpoint,
    stop: async () => {
      child.kill('SIGINT');
      await exited;
      const s = parseDatabaseUrl(databaseUrl);
      const conn = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password });
      await conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await conn.end();
    },
  };
}
