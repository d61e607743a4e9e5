/**
 * Stream API Lambda (API Gateway HTTP API, payload 2.0, JWT authorizer): the routes of STREAM_ROUTES in
 * lib/api/routes.ts — a job's stream log after a position, long-polled (lib/api/stream-api.ts). Its own function:
 * its timeout is longer than the API functions' (infra/app-functions.ts).
 */
import { createStreamApiHandler } from '../lib/api/stream-api.ts';

export const handler = createStreamApiHandler();
