/**
 * Prisma client setup: the only place that constructs a PrismaClient. Repositories receive a
 * `Db` (the client or a transaction client) so callers can group writes into one transaction.
 */
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaClient } from './generated/client.ts';
import type { Prisma } from './generated/client.ts';
import { databaseUrlFromEnv, parseDatabaseUrl } from './database-url.ts';

export type { Prisma };
export type PrismaDb = InstanceType<typeof PrismaClient>;
/** A client or a transaction client: every repository function accepts either. */
export type Db = PrismaDb | Prisma.TransactionClient;

/** Creates a client on its own connection pool. Callers own it and must `$disconnect()` it. */
export function createPrismaClient(url: string): PrismaDb {
  const s = parseDatabaseUrl(url);
  const adapter = new PrismaMariaDb(
    {
      host: s.host,
      port: s.port,
      user: s.user,
      password: s.password,
      database: s.database,
      connectionLimit: s.connectionLimit,
      allowPublicKeyRetrieval: s.allowPublicKeyRetrieval,
      // Timestamps are stored and read as UTC whatever the server's time zone.
      timezone: 'Z',
    },
    { database: s.database },
  );
  return new PrismaClient({ adapter });
}

let shared: PrismaDb | undefined;

/** The process-wide client (one per Lambda container), created on first use from DATABASE_URL. */
export function getPrisma(): PrismaDb {
  shared ??= createPrismaClient(databaseUrlFromEnv());
  return shared;
}

/** Closes the process-wide client (tests, local runtime shutdown). */
export async function closePrisma(): Promise<void> {
  const client = shared;
  shared = undefined;
  await client?.$disconnect();
}
