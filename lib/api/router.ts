/**
 * Turns a route table and an operation per action into one Lambda handler (middy). Per request, in order
 * and before any database or AWS call: find the route by `event.routeKey`; authenticate (claims from the JWT
 * authorizer); refuse an oversized body or one that is not JSON; refuse ill-formed Unicode and validate path
 * parameters and the query string. Then DATABASE_URL is made sure of (from the database secret, once per
 * container) and the operation runs. Any error becomes a response in the error middleware ({@link httpErrors}).
 */
import middy, { type MiddlewareObj } from '@middy/core';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { ensureDatabaseUrl } from '../config/database-secret.ts';
import { EngineError } from '../errors.ts';
import type { Caller } from './auth.ts';
import { mapError } from './error-mapper.ts';
import { RouteNotFoundError } from './http-errors.ts';
import { assertJsonContentType, assertWellFormedParams, bodyText, json, parseField, type ApiEvent, type ApiResult } from './http.ts';
import { QUERY_SCHEMAS, emptyQuerySchema, jobIdPathSchema, noPathParamsSchema } from './request-schemas.ts';
import { routeKeyOf, type AdminAction, type ApiRoute, type StreamAction, type UserAction } from './routes.ts';

/** What an operation gets: the event, its route, the authenticated caller, validated params and query. */
export interface OperationContext<D, R extends ApiRoute = ApiRoute> {
  event: ApiEvent;
  route: R;
  caller: Caller;
  /** Validated path parameters (`jobId` on routes that have one). */
  params: { jobId?: string };
  /** The query parsed by the action's schema in `QUERY_SCHEMAS` (`{}` for actions without one). */
  query: unknown;
  deps: D;
  /** The Lambda invocation's context (its remaining time bounds a long-poll); absent when called without one. */
  lambda?: Context;
}

export type Operation<D, R extends ApiRoute = ApiRoute> = (ctx: OperationContext<D, R>) => Promise<ApiResult>;

export interface RouterOptions<A extends UserAction | AdminAction | StreamAction, D, R extends ApiRoute<A>> {
  routes: readonly R[];
  /** One operation per action: a missing one is a type error. */
  operations: Record<A, Operation<D, R>>;
  /** @throws UnauthorizedError / ForbiddenError */
  authenticate(event: ApiEvent, route: R): Caller;
  /** Resolved on each request (cheap: memoised by the caller), so a cold start does no work before routing. */
  deps(): D;
  logger: Logger;
}

/** The Lambda handler for a route table. */
export function createRouter<A extends UserAction | AdminAction | StreamAction, D, R extends ApiRoute<A>>(options: RouterOptions<A, D, R>) {
  const byKey = new Map<string, R>(options.routes.map((r) => [routeKeyOf(r), r]));
  const handle = async (event: ApiEvent, lambda?: Context): Promise<ApiResult> => {
    const route = byKey.get(event.routeKey);
    if (!route) throw new RouteNotFoundError(event.routeKey);
    const caller = options.authenticate(event, route);
    bodyText(event); // 413 for an oversized body on every route, before anything reads it
    assertJsonContentType(event); // 415 for a body that is not JSON
    assertWellFormedParams(event.pathParameters, 'path');
    assertWellFormedParams(event.queryStringParameters, 'query');
    const pathSchema = route.path.includes('{jobId}') ? jobIdPathSchema : noPathParamsSchema;
    const params = parseField(pathSchema, event.pathParameters ?? {}, 'path') as { jobId?: string };
    const query = parseField(QUERY_SCHEMAS[route.action] ?? emptyQuerySchema, event.queryStringParameters ?? {}, 'query');
    // DATABASE_URL from the database secret on a deployed function's first request (a no-op after it, and
    // wherever DATABASE_URL is set): here, so that Secrets Manager failing is an error answer like any other.
    await ensureDatabaseUrl();
    return options.operations[route.action]({ event, route, caller, params, query, deps: options.deps(), ...(lambda ? { lambda } : {}) });
  };
  return middy<ApiEvent, ApiResult, Error, Context>(handle).use(httpErrors(options.logger));
}

/**
 * middy `onError`: the typed error → its response (./error-mapper.ts). A 5xx is logged with its full detail
 * (name, message, stack, cause) server-side and answered with a generic message; a 4xx is logged as a refusal.
 */
export function httpErrors(logger: Logger): MiddlewareObj<ApiEvent, ApiResult, Error, Context> {
  return {
    onError: (request) => {
      const mapped = mapError(request.error);
      const where = { routeKey: request.event.routeKey, requestId: request.event.requestContext?.requestId };
      if (mapped.expose) logger.info('request refused', { ...where, status: mapped.status, code: mapped.body.error.code });
      else logger.error('request failed', { ...where, status: mapped.status, error: request.error as Error });
      request.response = json(mapped.status, mapped.body, mapped.headers);
    },
  };
}

/** `ctx.params.jobId` on a route whose path has `{jobId}` (the router validated it). */
export function jobIdOf(ctx: Pick<OperationContext<unknown>, 'params' | 'route'>): string {
  const { jobId } = ctx.params;
  if (jobId === undefined) throw new RouteWiringError(ctx.route.operationId, 'jobId');
  return jobId;
}

/** A route's optional field (`jobType`, `provider`) its action needs. */
export function routeField(route: ApiRoute, field: 'jobType' | 'provider'): string {
  const value = route[field];
  if (value === undefined) throw new RouteWiringError(route.operationId, field);
  return value;
}

/** A route table entry lacks what its action needs: a bug in lib/api/routes.ts, answered as 500. */
export class RouteWiringError extends EngineError {
  readonly code = 'ROUTE_WIRING';
  constructor(readonly operationId: string, readonly field: string) {
    super(`Route ${operationId} has no ${field}`);
  }
}
