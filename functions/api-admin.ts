/**
 * Admin API Lambda (API Gateway HTTP API, payload 2.0, JWT authorizer): every route of ADMIN_ROUTES in
 * lib/api/routes.ts — job list and detail, retry, stats — for callers with the SUPER_ADMIN role only.
 * Routing, validation, auth and error mapping live in lib/api (see lib/api/admin-api.ts).
 */
import { withDatabase } from '../lib/config/with-database.ts';
import { createAdminApiHandler } from '../lib/api/admin-api.ts';

export const handler = withDatabase(createAdminApiHandler());
