/**
 * The functions survive a rotation of the database secret (lib/db/credential-rotation.ts): a database user of
 * this test's own, its URL in a Secrets Manager secret on moto_server (read through a counting pass-through, so
 * the test sees every GetSecretValue), the API handler and the engine running on the process-wide pools. The
 * password is changed under them (`ALTER USER … IDENTIFIED BY`), the secret updated, the old connections killed:
 * the next request and the next job succeed on rebuilt pools after one read of the secret. A wrong secret fails
 * clearly after one read — a 503 for the API, an infrastructure redelivery for the consumer — and more requests
 * do not read it in a loop; once the secret is right again, the redelivered job succeeds.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { CreateSecretCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import type { Message } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpApiEnvironment } from '../api/api-env.ts';
import { createUserApiHandler } from '../../lib/api/user-api.ts';
import { ensureDatabaseUrl } from '../../lib/config/database-secret.ts';
import { createSecretsManagerClient } from '../../lib/credentials/aws-clients.ts';
import { closePrisma, getPrisma } from '../../lib/db/client.ts';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';
import { closeSqlPool } from '../../lib/db/sql-pool.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';
import { rawDb } from '../helpers/db.ts';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness.ts';
import { waitFor } from '../helpers/ports.ts';

const ENV_KEYS = ['DATABASE_URL', 'DATABASE_SECRET_ARN', 'AWS_ENDPOINT_URL_SECRETS_MANAGER'] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
const user = `rot_${randomBytes(4).toString('hex')}`;
const database = parseDatabaseUrl(process.env.DATABASE_URL ?? '');
const secrets = createSecretsManagerClient();
let secretArn: string;
let counter: { url: string; reads(): number; close(): Promise<void> };
let h: EngineHarness;
let userApi: ReturnType<typeof createUserApiHandler>;

/** The secret as RDS shapes it, for this test's user. */
const secretValue = (password: string) => JSON.stringify({ username: user, password, engine: 'mysql', host: database.host, port: database.port, dbname: database.database });

beforeAll(async () => {
  const root = await rawDb(); // the test's own root connection, opened before DATABASE_URL names the rotating user
  await root.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'first-password'`);
  await root.query(`GRANT ALL PRIVILEGES ON \`${database.database}\`.* TO '${user}'@'%'`);
  ({ ARN: secretArn } = await secrets.send(new CreateSecretCommand({ Name: `db-${user}`, SecretString: secretValue('first-password') })) as { ARN: string });
  counter = await countingSecretsManager(process.env.AWS_ENDPOINT_URL ?? '');
  // A deployed function's environment: the secret's ARN, no DATABASE_URL; the pools are built from the secret.
  await closePrisma();
  await closeSqlPool();
  delete process.env.DATABASE_URL;
  process.env.DATABASE_SECRET_ARN = secretArn;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = counter.url;
  await ensureDatabaseUrl();
  expect(parseDatabaseUrl(process.env.DATABASE_URL!).user).toBe(user);
  await setUpApiEnvironment();
  userApi = createUserApiHandler();
  h = await startEngineHarness();
}, 60_000);

afterAll(async () => {
  await h?.close();
  await closePrisma();
  await closeSqlPool();
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
  await (await rawDb()).query(`DROP USER IF EXISTS '${user}'@'%'`);
  await counter?.close();
  secrets.destroy();
});

/** The database takes `dbPassword`, the secret says `secretPassword`; every connection of the user is killed. */
async function rotate(dbPassword: string, secretPassword = dbPassword): Promise<void> {
  const root = await rawDb();
  await root.query(`ALTER USER '${user}'@'%' IDENTIFIED BY '${dbPassword}'`);
  await secrets.send(new PutSecretValueCommand({ SecretId: secretArn, SecretString: secretValue(secretPassword) }));
  await killConnections();
}

async function killConnections(): Promise<void> {
  const root = await rawDb();
  const [rows] = await root.query(`SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?`, [user]);
  for (const { ID } of rows as { ID: number }[]) await root.query(`KILL ${Number(ID)}`).catch(() => undefined);
  await waitFor(async () => (await connectionsOfUser()) === 0, 'the killed connections to be gone');
}

async function connectionsOfUser(): Promise<number> {
  const [rows] = await (await rawDb()).query(`SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = ?`, [user]);
  return Number((rows as { n: number }[])[0]?.n ?? 0);
}

const createJob = (sub: string) => invoke(userApi, apiEvent('POST /api/ai/feynman-evaluations', { claims: userClaims(sub), body: { concept: 'Gravity', explanation: 'Mass attracts mass.' } }));
const listJobs = (sub: string) => invoke(userApi, apiEvent('GET /api/ai/jobs', { claims: userClaims(sub) }));

/** Delivers `jobId`'s message until the job is terminal (no dispatch: the message is on the queue). */
async function deliverUntilTerminal(jobId: string) {
  const failures: Message[] = [];
  for (const deadline = Date.now() + 45_000; Date.now() < deadline;) {
    const { response, messages } = await h.deliver('interactive', 2);
    failures.push(...messages.filter((m) => response.batchItemFailures.some((f) => f.itemIdentifier === m.MessageId)));
    const job = await getPrisma().aiJob.findUniqueOrThrow({ where: { id: jobId } }).catch(() => undefined);
    if (job && ['succeeded', 'failed', 'cancelled'].includes(job.lifecycleStatus)) return { job, failures };
  }
  throw new Error(`job ${jobId} did not finish`);
}

describe('a rotation of the database secret under a running runtime', () => {
  it('the next request and the next job succeed on rebuilt pools, after one read of the secret', async () => {
    expect((await createJob('before')).status).toBe(202);
    const before = await h.create({ input: { prompt: 'before the rotation' } });
    expect((await deliverUntilTerminal(before.id)).job.lifecycleStatus).toBe('succeeded');

    await rotate('second-password');
    const reads = counter.reads();
    const created = await createJob('after');
    expect(created.status).toBe(202);
    expect((await listJobs('after')).body.items).toHaveLength(1);
    expect(counter.reads()).toBe(reads + 1);

    await killConnections();
    const after = await h.create({ input: { prompt: 'after the rotation' } });
    const { job, failures } = await deliverUntilTerminal(after.id);
    expect(job).toMatchObject({ lifecycleStatus: 'succeeded', attemptCount: 1 });
    expect(failures).toEqual([]);
    expect(counter.reads()).toBe(reads + 1); // the new credentials still hold: nothing read again

    // An interactive transaction whose connection is refused is run again on the new pool (its callback had not started).
    await rotate('rotated-again');
    expect(await getPrisma().$transaction(async (tx) => tx.aiJob.count({ where: { id: after.id } }))).toBe(1);
    expect(counter.reads()).toBe(reads + 2);
  }, 90_000);

  it('a wrong secret fails clearly after one read: 503 for the API, a redelivery for the consumer, no loop of reads', async () => {
    const pending = await h.create({ input: { prompt: 'delivered during the outage' } });
    await rotate('third-password', 'not-the-password');
    const reads = counter.reads();
    const refused = await listJobs('during');
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('PLATFORM_UNAVAILABLE');
    expect(counter.reads()).toBe(reads + 1);

    const more = await Promise.all(Array.from({ length: 5 }, () => listJobs('during')));
    expect(more.map((r) => r.status)).toEqual([503, 503, 503, 503, 503]);
    expect(counter.reads()).toBeLessThanOrEqual(reads + 2);

    const { response, messages } = await h.deliver('interactive', 2);
    expect(messages.map((m) => JSON.parse(m.Body!).jobId)).toEqual([pending.id]);
    expect(response.batchItemFailures).toHaveLength(1);

    // The secret is put right: the redelivered message runs the job.
    await secrets.send(new PutSecretValueCommand({ SecretId: secretArn, SecretString: secretValue('third-password') }));
    expect((await deliverUntilTerminal(pending.id)).job.lifecycleStatus).toBe('succeeded');
    expect(counter.reads()).toBeLessThanOrEqual(reads + 4);
  }, 120_000);
});

/** A pass-through to the Secrets Manager emulator that counts GetSecretValue requests. */
async function countingSecretsManager(target: string): Promise<typeof counter> {
  let reads = 0;
  const server = http.createServer((req, res) => {
    if (req.headers['x-amz-target'] === 'secretsmanager.GetSecretValue') reads += 1;
    const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    reads: () => reads,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
