/**
 * User API Lambda (API Gateway HTTP API, payload 2.0, JWT authorizer): every route of USER_ROUTES in
 * lib/api/routes.ts — job creation per job type, status, list, cancel, results, the user's DeepSeek key.
 * Routing, validation, auth and error mapping live in lib/api (see lib/api/user-api.ts).
 */
import { withDatabase } from '../lib/config/with-database.ts';
import { createUserApiHandler } from '../lib/api/user-api.ts';

export const handler = withDatabase(createUserApiHandler());
