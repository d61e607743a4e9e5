/**
 * Runs once per `vitest run`: the server at DATABASE_URL given production's sql_mode and time zone
 * (./server-settings.ts), one database per worker on it, each migrated by the offline runner; SQS and other
 * AWS-API emulators. Databases are dropped at the end unless
 * KEEP_TEST_DATABASES=1 (to inspect what a failing test left).
 */
import mysql from 'mysql2/promise';
import type { TestProject } from 'vitest/node';
import { DEFAULT_DATABASE_URL, parseDatabaseUrl, withDatabase } from '../../lib/db/database-url.ts';
import { migrateDatabase } from '../../lib/db/migrator.ts';
import { describeConnectionError } from '../../lib/db/connection-errors.ts';
import { startEmulators } from '../helpers/aws-emulators.ts';
import { pinTestServerSettings } from './server-settings.ts';
import { TEST_WORKERS } from '../vitest.config.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrls: string[];
    sqsEndpoint: string;
    awsEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const serverUrl = process.env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL;
  const runId = `${process.pid}_${Date.now().toString(36)}`;
  const urls = Array.from({ length: TEST_WORKERS }, (_, i) => withDatabase(serverUrl, `aijobs_test_${runId}_${i + 1}`));
  try {
    // Production's sql_mode (ONLY_FULL_GROUP_BY, strict) and UTC, before any test connects (./server-settings.ts).
    await pinTestServerSettings(serverUrl);
    for (const url of urls) await migrateDatabase(url);
  } catch (err) {
    throw new Error(describeConnectionError(err, serverUrl), { cause: err });
  }
  const emulators = await startEmulators();
  project.provide('databaseUrls', urls);
  project.provide('sqsEndpoint', emulators.sqsEndpoint);
  project.provide('awsEndpoint', emulators.awsEndpoint);

  return async () => {
    await emulators.stop();
    if (process.env.KEEP_TEST_DATABASES === '1') return;
    const s = parseDatabaseUrl(serverUrl);
    const conn = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password });
    for (const url of urls) await conn.query(`DROP DATABASE IF EXISTS \`${parseDatabaseUrl(url).database}\``);
    await conn.end();
  };
}
