/**
 * What the memory benches (bench/memory.ts, bench/memory-api.ts) run a bundled function against: a freshly
 * migrated database, fauxqs with the job queues, and an endpoint standing in for AppSync Events' publish API.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import mysql from 'mysql2/promise';
import { databaseUrlFromEnv, parseDatabaseUrl, withDatabase } from '../../lib/db/database-url.ts';
import { migrateDatabase } from '../../lib/db/migrator.ts';
import { createJobQueues } from '../../lib/queue/create-queues.ts';

/** Database `database` on DATABASE_URL's server, dropped and migrated; fauxqs with the queues `queuePrefix`-*. */
export async function startBenchServices(database: string, queuePrefix: string) {
  const url = withDatabase(databaseUrlFromEnv(), database);
  const server = parseDatabaseUrl(url);
  const admin = await mysql.createConnection({ host: server.host, port: server.port, user: server.user, password: server.password });
  await admin.query(`DROP DATABASE IF EXISTS ${database}`);
  await migrateDatabase(url);
  const fauxqs = await startFauxqs({ port: 0, logger: false, host: '127.0.0.1' } as Parameters<typeof startFauxqs>[0]);
  const endpoint = `http://127.0.0.1:${fauxqs.port}`;
  const sqs = new SQSClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  const queues = await createJobQueues(sqs, queuePrefix);
  return {
    url, admin, endpoint, sqs, queues,
    async stop(): Promise<void> {
      sqs.destroy();
      await Promise.all([fauxqs.stop(), admin.end()]);
    },
  };
}

/** Lambda's realtime publishes go to AppSync Events; here to an endpoint that takes each one (200, `{}`). */
export async function startPublishSink() {
  let requests = 0;
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/event`, requests: () => requests, close: () => new Promise((r) => server.close(r)) };
}
