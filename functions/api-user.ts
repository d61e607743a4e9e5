/**
 * User API Lambda (API Gateway HTTP API, payload 2.0, JWT authorizer): every route of USER_ROUTES in
 * lib/api/routes.ts — job creation per job type, status, list, cancel, results, the user's DeepSeek key.
 * Routing, validation, auth and error mapping live in lib/api (see lib/api/user-api.ts).
 */
import { createUserApiHandler } from '../lib/api/user-api.ts';
import { withStreamPublishing } from '../lib/realtime/handler-publishing.ts';

// The router makes sure of DATABASE_URL itself (lib/api/router.ts), so a Secrets Manager failure is a 503, not a crash.
// A cancel writes a status entry; its push is flushed (bounded) before the response goes out.
export const handler = withStreamPublishing(createUserApiHandler());
