/**
 * The HTTP API's routes as data: the one list the Lambda routers dispatch on (by `routeKey`), the CDK stack
 * creates routes from, the local runtime matches requests against, and the OpenAPI document describes.
 *
 * Pure data: no imports at all, so CDK (infra/) can import it without pulling in Prisma or the AWS SDK.
 * Invariant: `routeKeyOf(route)` is unique across {@link USER_ROUTES}, {@link ADMIN_ROUTES} and
 * {@link STREAM_ROUTES}, and every `action` has exactly one implementation in lib/api/user-api.ts,
 * lib/api/admin-api.ts or lib/api/stream-api.ts (checked by the type system there and by test/api/routes.test.ts).
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What the user Lambda does for a route; several routes may share one (every creation route is `createJob`). */
export type UserAction =
  | 'createJob'
  | 'getJob'
  | 'listJobs'
  | 'cancelJob'
  | 'getJobResult'
  | 'getCredential'
  | 'putCredential'
  | 'deleteCredential'
  | 'getSpend'
  | 'getRealtimeConfig';

/** What the admin Lambda does for a route. */
export type AdminAction = 'adminListJobs' | 'adminGetJob' | 'adminRetryJob' | 'adminCancelJob' | 'adminStats' | 'adminUsage' | 'adminUsageByUser' | 'adminReaperReport'
  | 'adminBudgets' | 'adminSetModelLimits' | 'adminResetModelLimits' | 'adminEndCooldown' | 'adminSetSpendCap' | 'adminResetSpendCap';

/** What the stream Lambda does for a route. */
export type StreamAction = 'streamJob' | 'adminStreamJob';

export interface ApiRoute<A extends string = string> {
  method: HttpMethod;
  /** API Gateway path syntax: `{jobId}` is a path parameter. */
  path: string;
  /** Unique; also the OpenAPI operationId. */
  operationId: string;
  summary: string;
  action: A;
  /** For per-job-type routes (creation, results): the job type the route serves. */
  jobType?: string;
  /** For credential routes: the provider the route manages. */
  provider?: string;
}

/**
 * Routes of `functions/api-user.ts`; every one requires a valid JWT (its `sub` is the user id).
 * Creation is per job type — there is deliberately no generic `POST /api/ai/jobs`.
 */
export const USER_ROUTES = [
  { method: 'POST', path: '/api/ai/feynman-evaluations', operationId: 'createFeynmanEvaluation', action: 'createJob', jobType: 'feynman_evaluation', summary: 'Start a Feynman evaluation job' },
  { method: 'POST', path: '/api/ai/quiz-generations', operationId: 'createQuizGeneration', action: 'createJob', jobType: 'quiz_generation', summary: 'Start a quiz generation job' },
  { method: 'POST', path: '/api/ai/flashcard-generations', operationId: 'createFlashcardGeneration', action: 'createJob', jobType: 'flashcard_generation', summary: 'Start a flashcard generation job' },
  { method: 'GET', path: '/api/ai/feynman-evaluations/{jobId}', operationId: 'getFeynmanEvaluation', action: 'getJobResult', jobType: 'feynman_evaluation', summary: 'The evaluation a succeeded Feynman evaluation job wrote' },
  { method: 'GET', path: '/api/ai/quiz-generations/{jobId}', operationId: 'getQuizGeneration', action: 'getJobResult', jobType: 'quiz_generation', summary: 'The questions a succeeded quiz generation job wrote' },
  { method: 'GET', path: '/api/ai/flashcard-generations/{jobId}', operationId: 'getFlashcardGeneration', action: 'getJobResult', jobType: 'flashcard_generation', summary: 'The flashcards a succeeded flashcard generation job wrote' },
  { method: 'GET', path: '/api/ai/jobs', operationId: 'listJobs', action: 'listJobs', summary: "The caller's jobs, newest first" },
  { method: 'GET', path: '/api/ai/jobs/{jobId}', operationId: 'getJob', action: 'getJob', summary: 'Status of one of the caller\'s jobs (JobStatusResponse, ADR-003 §7.2)' },
  { method: 'POST', path: '/api/ai/jobs/{jobId}/cancel', operationId: 'cancelJob', action: 'cancelJob', summary: 'Cancel a queued job, or request cancellation of a running one' },
  { method: 'GET', path: '/api/ai/credentials/deepseek', operationId: 'getDeepseekCredential', action: 'getCredential', provider: 'deepseek', summary: "The caller's active DeepSeek key (fingerprint only)" },
  { method: 'PUT', path: '/api/ai/credentials/deepseek', operationId: 'putDeepseekCredential', action: 'putCredential', provider: 'deepseek', summary: 'Store the caller\'s DeepSeek key (encrypted), replacing the previous one' },
  { method: 'DELETE', path: '/api/ai/credentials/deepseek', operationId: 'deleteDeepseekCredential', action: 'deleteCredential', provider: 'deepseek', summary: "Revoke the caller's DeepSeek key" },
  { method: 'GET', path: '/api/ai/spend', operationId: 'getSpend', action: 'getSpend', summary: "The caller's spend today and this month (UTC) against the spending caps that apply, and when each resets" },
  { method: 'GET', path: '/api/ai/realtime', operationId: 'getRealtimeConfig', action: 'getRealtimeConfig', summary: "Where to subscribe to realtime pushes of the caller's jobs (the AppSync Events endpoint and the caller's channels), or that this stage has none" },
] as const satisfies readonly ApiRoute<UserAction>[];

/** Routes of `functions/api-admin.ts`; every one requires a JWT whose roles or groups include `SUPER_ADMIN`. */
export const ADMIN_ROUTES = [
  { method: 'GET', path: '/admin-api/ai/jobs', operationId: 'adminListJobs', action: 'adminListJobs', summary: 'All jobs, filtered, newest first' },
  { method: 'GET', path: '/admin-api/ai/jobs/{jobId}', operationId: 'adminGetJob', action: 'adminGetJob', summary: 'A job with internal error, transition history and usage per attempt' },
  { method: 'POST', path: '/admin-api/ai/jobs/{jobId}/retry', operationId: 'adminRetryJob', action: 'adminRetryJob', summary: 'Retry a failed or cancelled job as a new job (parentJobId set)' },
  { method: 'POST', path: '/admin-api/ai/jobs/{jobId}/cancel', operationId: 'adminCancelJob', action: 'adminCancelJob', summary: "Cancel any user's job (queued or between attempts: at once; running: requested), the admin recorded as actor" },
  { method: 'GET', path: '/admin-api/ai/stats', operationId: 'adminStats', action: 'adminStats', summary: 'Jobs per state and type, outbox backlog, queue and dead-letter queue depths' },
  { method: 'GET', path: '/admin-api/ai/usage', operationId: 'adminUsage', action: 'adminUsage', summary: 'Tokens and cost per UTC day × job type × model × credential mode (filters: days, jobType, model, userId)' },
  { method: 'GET', path: '/admin-api/ai/usage/users', operationId: 'adminUsageByUser', action: 'adminUsageByUser', summary: 'Tokens and cost per user × UTC day × job type × model × credential mode' },
  { method: 'GET', path: '/admin-api/ai/reaper/report', operationId: 'adminReaperReport', action: 'adminReaperReport', summary: "Open jobs the reaper's next run would act on (expired leases, overdue retries, queued jobs nobody picked up), read-only" },
  { method: 'GET', path: '/admin-api/ai/budgets', operationId: 'adminBudgets', action: 'adminBudgets', summary: "Provider limits and spending caps with their use now: each model's minute window, calls in flight and cooldown; the platform's and each job type's spend today; the caps' defaults and overrides; a user's day and month (`userId`)" },
  { method: 'PUT', path: '/admin-api/ai/budgets/limits', operationId: 'adminSetModelLimits', action: 'adminSetModelLimits', summary: "Set a model's requests per minute, tokens per minute or calls in flight; they stand until reset" },
  { method: 'DELETE', path: '/admin-api/ai/budgets/limits', operationId: 'adminResetModelLimits', action: 'adminResetModelLimits', summary: "Give a model's limits back to the stage's configuration" },
  { method: 'DELETE', path: '/admin-api/ai/budgets/cooldowns', operationId: 'adminEndCooldown', action: 'adminEndCooldown', summary: "End a model's cooldown now, at its full rate (the provider is known to be fine again)" },
  { method: 'PUT', path: '/admin-api/ai/budgets/caps', operationId: 'adminSetSpendCap', action: 'adminSetSpendCap', summary: "Set a spending cap: a user's or a job type's own, or a scope's default (`*`); lowered below the spend counted, it stops new admissions at once and never cancels running jobs" },
  { method: 'DELETE', path: '/admin-api/ai/budgets/caps', operationId: 'adminResetSpendCap', action: 'adminResetSpendCap', summary: "Remove an admin's cap: a user or job type falls back to the scope's default, a default to the stage's configuration" },
] as const satisfies readonly ApiRoute<AdminAction>[];

/**
 * Routes of `functions/api-stream.ts`: a job's stream log, read after a position, optionally held open until
 * something comes (long-poll). A function of its own, with a longer timeout than the API functions': a held
 * request outlives their 15 s. `access`: `owner` routes are the user API's (another user's job is not found),
 * `admin` routes the admin API's (the admin group, and `adminScope` at API Gateway when set).
 */
export const STREAM_ROUTES = [
  { method: 'GET', path: '/api/ai/jobs/{jobId}/stream', operationId: 'streamJob', action: 'streamJob', access: 'owner', summary: "One of the caller's jobs as it runs: its status changes and its output as the model writes it, after a position (`after`), held open up to `wait` seconds until something comes (long-poll)" },
  { method: 'GET', path: '/admin-api/ai/jobs/{jobId}/stream', operationId: 'adminStreamJob', action: 'adminStreamJob', access: 'admin', summary: "Any user's job as it runs (the stream log, as `streamJob` reads it)" },
] as const satisfies readonly (ApiRoute<StreamAction> & { access: 'owner' | 'admin' })[];

export type UserRoute = (typeof USER_ROUTES)[number];
export type AdminRoute = (typeof ADMIN_ROUTES)[number];
export type StreamRoute = (typeof STREAM_ROUTES)[number];

/** The `routeKey` API Gateway puts in the event for this route, e.g. `POST /api/ai/quiz-generations`. */
export function routeKeyOf(route: Pick<ApiRoute, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** A request matched to a route: what API Gateway would put in `routeKey` and `pathParameters`. */
export interface RouteMatch<R extends ApiRoute> {
  route: R;
  routeKey: string;
  pathParameters: Record<string, string>;
}

/**
 * Matches a method and raw path against `routes` as API Gateway does for literal and `{param}` segments
 * (for the local runtime, which must build the same event). Segment values are URI-decoded. Null when none match.
 */
export function matchRoute<R extends ApiRoute>(routes: readonly R[], method: string, rawPath: string): RouteMatch<R> | null {
  const segments = rawPath.split('/');
  for (const route of routes) {
    if (route.method !== method.toUpperCase()) continue;
    const template = route.path.split('/');
    if (template.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matched = template.every((part, i) => {
      const actual = segments[i] ?? '';
      const param = /^\{(\w+)\}$/.exec(part)?.[1];
      if (param === undefined) return part === actual;
      if (actual === '') return false;
      params[param] = safeDecode(actual);
      return true;
    });
    if (matched) return { route, routeKey: routeKeyOf(route), pathParameters: params };
  }
  return null;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
