/**
 * DATABASE_URL from the RDS-generated secret (lib/config/database-secret.ts), against Secrets Manager on
 * moto_server (or LocalStack when AWS_ENDPOINT_URL points there).
 */
import { randomUUID } from 'node:crypto';
import { CreateSecretCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, describe, expect, it } from 'vitest';
import { createSecretsManagerClient } from '../../lib/credentials/aws-clients.ts';
import { DatabaseSecretError, DatabaseSecretUnavailableError, databaseUrlFromSecret, ensureDatabaseUrl, refreshDatabaseUrl } from '../../lib/config/database-secret.ts';
import { isDatabaseUnavailable } from '../../lib/db/connection-errors.ts';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';

const secrets = createSecretsManagerClient();
afterAll(() => secrets.destroy());

/** A secret shaped like the one RDS generates for a cluster, with characters that need URL-encoding. */
const rdsSecret = {
  username: 'ai_jobs admin',
  password: 'p@ss:w/rd%?#&=+',
  engine: 'mysql',
  host: 'cluster.cluster-abc.eu-west-1.rds.amazonaws.com',
  port: 3306,
  dbname: 'ai_jobs',
  dbClusterIdentifier: 'cluster',
};

async function createSecret(value: unknown): Promise<string> {
  const { ARN } = await secrets.send(new CreateSecretCommand({ Name: `db-${randomUUID()}`, SecretString: JSON.stringify(value) }));
  return ARN!;
}

/** An environment like a deployed function's: AWS endpoint and region from the test setup, no DATABASE_URL. */
function lambdaEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const { DATABASE_URL: _url, ...env } = process.env;
  return { ...env, ...extra };
}

describe('ensureDatabaseUrl', () => {
  it('builds DATABASE_URL from the secret, with the proxy endpoint as host and user and password encoded', async () => {
    const env = lambdaEnv({ DATABASE_SECRET_ARN: await createSecret(rdsSecret), DATABASE_HOST: 'proxy.proxy-abc.rds.amazonaws.com' });
    await ensureDatabaseUrl(env);
    expect(parseDatabaseUrl(env.DATABASE_URL!)).toMatchObject({
      host: 'proxy.proxy-abc.rds.amazonaws.com', port: 3306, user: rdsSecret.username, password: rdsSecret.password, database: 'ai_jobs',
    });
  });

  it('leaves a DATABASE_URL that is already set alone, without asking Secrets Manager', async () => {
    const env = { DATABASE_URL: 'mysql://root@127.0.0.1:3306/x', DATABASE_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:missing' };
    await ensureDatabaseUrl(env);
    expect(env.DATABASE_URL).toBe('mysql://root@127.0.0.1:3306/x');
  });

  it('fetches once for concurrent callers of one container', async () => {
    const env = lambdaEnv({ DATABASE_SECRET_ARN: await createSecret(rdsSecret) });
    const first = ensureDatabaseUrl(env);
    expect(ensureDatabaseUrl(env)).toBe(first);
    await first;
    expect(parseDatabaseUrl(env.DATABASE_URL!).host).toBe(rdsSecret.host);
  });

  it('forgets a failed fetch, so the next invocation tries again', async () => {
    const name = `db-${randomUUID()}`;
    const env = lambdaEnv({ DATABASE_SECRET_ARN: name });
    await expect(ensureDatabaseUrl(env)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    await secrets.send(new CreateSecretCommand({ Name: name, SecretString: JSON.stringify(rdsSecret) }));
    await ensureDatabaseUrl(env);
    expect(env.DATABASE_URL).toBeDefined();
  });

  it('reports Secrets Manager not answering as the database being unavailable (retryable), a refusal as it is', async () => {
    const { freePort } = await import('../helpers/ports.ts');
    const env = lambdaEnv({ DATABASE_SECRET_ARN: await createSecret(rdsSecret), AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${await freePort()}`, AWS_MAX_ATTEMPTS: '1' });
    const down = await ensureDatabaseUrl(env).catch((err: unknown) => err);
    expect(down).toBeInstanceOf(DatabaseSecretUnavailableError);
    expect(isDatabaseUnavailable(down)).toBe(true);
    expect(env.DATABASE_URL).toBeUndefined();
    const refused = await ensureDatabaseUrl(lambdaEnv({ DATABASE_SECRET_ARN: `db-${randomUUID()}` })).catch((err: unknown) => err);
    expect(refused).toMatchObject({ name: 'ResourceNotFoundException' });
    expect(isDatabaseUnavailable(refused)).toBe(false);
  });

  it('gives up on a Secrets Manager that accepts connections and never answers, as unavailable (no hang)', async () => {
    const { silentEndpoint } = await import('../helpers/ports.ts');
    const silent = await silentEndpoint();
    try {
      const env = lambdaEnv({ DATABASE_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:db', AWS_ENDPOINT_URL_SECRETS_MANAGER: silent.url });
      const hung = await ensureDatabaseUrl(env).catch((err: unknown) => err);
      expect(hung).toBeInstanceOf(DatabaseSecretUnavailableError);
      expect((hung as Error).cause).toMatchObject({ name: 'TimeoutError' });
    } finally {
      await silent.close();
    }
  }, 30_000);

  it('refuses to start with neither DATABASE_URL nor DATABASE_SECRET_ARN', async () => {
    await expect(ensureDatabaseUrl({})).rejects.toBeInstanceOf(DatabaseSecretError);
  });
});

describe('refreshDatabaseUrl (the secret rotated)', () => {
  it('reads the secret again and says whether DATABASE_URL changed; concurrent calls share one read', async () => {
    const arn = await createSecret(rdsSecret);
    const env = lambdaEnv({ DATABASE_SECRET_ARN: arn });
    await ensureDatabaseUrl(env);
    expect(await refreshDatabaseUrl(env)).toBe(false);
    await secrets.send(new PutSecretValueCommand({ SecretId: arn, SecretString: JSON.stringify({ ...rdsSecret, password: 'rotated' }) }));
    const first = refreshDatabaseUrl(env);
    expect(refreshDatabaseUrl(env)).toBe(first);
    expect(await first).toBe(true);
    expect(parseDatabaseUrl(env.DATABASE_URL!).password).toBe('rotated');
  });

  it('has nothing to read when the URL was given directly', async () => {
    const env = { DATABASE_URL: 'mysql://root@127.0.0.1:3306/x' };
    expect(await refreshDatabaseUrl(env)).toBe(false);
    expect(env.DATABASE_URL).toBe('mysql://root@127.0.0.1:3306/x');
  });
});

describe('databaseUrlFromSecret', () => {
  it('adds ssl=true when DATABASE_TLS is true, and the pool size when DATABASE_CONNECTION_LIMIT is set', () => {
    const url = new URL(databaseUrlFromSecret(JSON.stringify(rdsSecret), { DATABASE_TLS: 'true', DATABASE_CONNECTION_LIMIT: '3' }));
    expect(url.searchParams.get('ssl')).toBe('true');
    expect(parseDatabaseUrl(url.toString()).connectionLimit).toBe(3);
  });

  it('takes DATABASE_NAME over the secret, and needs one of them', () => {
    expect(parseDatabaseUrl(databaseUrlFromSecret(JSON.stringify(rdsSecret), { DATABASE_NAME: 'other' })).database).toBe('other');
    const { dbname: _db, ...withoutDb } = rdsSecret;
    expect(() => databaseUrlFromSecret(JSON.stringify(withoutDb))).toThrow(/dbname/);
  });

  it('names the missing field but never a value of the secret', () => {
    const errors = [
      () => databaseUrlFromSecret(JSON.stringify({ ...rdsSecret, username: '' })),
      () => databaseUrlFromSecret(`{"password":"${rdsSecret.password}"`),
      () => databaseUrlFromSecret(JSON.stringify({ ...rdsSecret, port: 'x' })),
    ].map((fn) => {
      try {
        fn();
      } catch (err) {
        return err as Error;
      }
      throw new Error('expected a DatabaseSecretError');
    });
    for (const err of errors) {
      expect(err).toBeInstanceOf(DatabaseSecretError);
      expect(`${err.message} ${String(err.cause ?? '')}`).not.toContain(rdsSecret.password);
    }
    expect(errors[0]!.message).toMatch(/username/);
  });
});
