import { parseDatabaseUrl } from './database-url.ts';

/**
 * A human message for a failure to reach or use MySQL, with the next step to take.
 * Never includes the password.
 */
export function describeConnectionError(err: unknown, url: string): string {
  const code = (err as { code?: string } | undefined)?.code;
  let where = 'the database';
  try {
    const s = parseDatabaseUrl(url);
    where = `MySQL at ${s.host}:${s.port} (user ${s.user})`;
  } catch {
    /* the URL itself is the problem; the error says so */
  }
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH') {
    return [
      `Cannot reach ${where}: ${code}.`,
      'Start one: `docker compose up -d mysql` (MySQL 8), or install the system package',
      '(`apt-get install mariadb-server && service mariadb start`), or point DATABASE_URL at another server',
      '(mysql://user:password@host:3306/ai_jobs).',
    ].join('\n');
  }
  if (code === 'ER_ACCESS_DENIED_ERROR' || code === 'ER_DBACCESS_DENIED_ERROR') {
    return `${where} refused the credentials in DATABASE_URL (${code}).`;
  }
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
