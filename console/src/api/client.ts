/**
 * The typed admin API client: openapi-fetch over the types generated from docs/openapi.json
 * (schema.d.ts), with the in-memory bearer token added to every request. A 401 signs the console out.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import { currentSession, setSession } from '../session.ts';
import type { components, paths } from './schema';

export type AdminJobSummary = components['schemas']['AdminJobSummary'];
export type AdminJobDetail = components['schemas']['AdminJobDetail'];
export type StatsResponse = components['schemas']['StatsResponse'];
export type ErrorResponse = components['schemas']['ErrorResponse'];
export type JobState = AdminJobSummary['lifecycleStatus'];
export type AdminJobListQuery = NonNullable<paths['/admin-api/ai/jobs']['get']['parameters']['query']>;

/** Every lifecycle state, in lifecycle order. */
export const JOB_STATES: readonly JobState[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

/** Only jobs in these states may be retried (as the retry route enforces). */
export const RETRYABLE_STATES: readonly JobState[] = ['failed', 'cancelled'];

const auth: Middleware = {
  onRequest({ request }) {
    const session = currentSession();
    if (session) request.headers.set('authorization', `Bearer ${session.token}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) setSession(null);
    return response;
  },
};

/** The admin API on this origin (the local runtime, or CloudFront's /admin-api/* behaviour). */
export const api = createClient<paths>({ baseUrl: location.origin });
api.use(auth);

/** Thrown for a non-2xx answer, with the API's error body when it sent one. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(readonly status: number, readonly body: ErrorResponse | undefined) {
    super(body?.error?.message ?? `HTTP ${status}`);
  }
}

/** The data of an openapi-fetch result, or an {@link ApiError}. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined || result.error !== undefined) {
    throw new ApiError(result.response.status, result.error as ErrorResponse | undefined);
  }
  return result.data;
}
