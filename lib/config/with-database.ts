/**
 * Wraps a Lambda handler so DATABASE_URL exists (built from the database secret in AWS, see
 * ./database-secret.ts) before the handler creates its first database client. Cheap after the first call.
 */
import { ensureDatabaseUrl } from './database-secret.ts';

export function withDatabase<E, C, R>(handler: (event: E, context: C) => Promise<R>): (event: E, context: C) => Promise<R> {
  return async (event, context) => {
    await ensureDatabaseUrl();
    return handler(event, context);
  };
}
