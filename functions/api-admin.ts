/**
 * Admin API Lambda (API Gateway HTTP API, payload 2.0, JWT authorizer): every route of ADMIN_ROUTES in
 * lib/api/routes.ts — job list and detail, retry, stats — for callers with the SUPER_ADMIN role only.
 * Routing, validation, auth and error mapping live in lib/api (see lib/api/admin-api.ts).
 */
import { createAdminApiHandler } from '../lib/api/admin-api.ts';
import { withStreamPublishing } from '../lib/realtime/handler-publishing.ts';

// The router makes sure of DATABASE_URL itself (lib/api/router.ts), so a Secrets Manager failure is a 503, not a crash.
// Retry and cancel write status entries; their pushes are flushed (bounded) before the response goes out.
export const handler = withStreamPublishing(createAdminApiHandler());
