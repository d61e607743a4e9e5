/**
 * Hand-built API Gateway HTTP API (payload 2.0) events with JWT authorizer claims, and a caller that invokes a
 * Lambda handler with one and parses the response — so API tests exercise the exported handlers exactly as
 * Lambda would, e.g.
 *   const res = await invoke(userHandler, apiEvent('GET /api/ai/jobs/{jobId}', { claims: userClaims('u1'), pathParameters: { jobId } }));
 */
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { newId } from '../../lib/db/ids.ts';

export type ApiEvent = APIGatewayProxyEventV2WithJWTAuthorizer;
export type Claims = Record<string, string>;

export interface EventOptions {
  /** Claims as API Gateway forwards them; `null` builds an event with no authorizer context at all. */
  claims?: Claims | null;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as is. */
  body?: unknown;
  isBase64Encoded?: boolean;
}

/** Claims of a signed-in user, as strings (`exp`/`iat` as API Gateway forwards numbers). */
export function userClaims(sub: string, extra: Claims = {}): Claims {
  const now = Math.floor(Date.now() / 1000);
  return { sub, iss: 'https://issuer.test', aud: 'ai-jobs', iat: String(now), exp: String(now + 3600), ...extra };
}

/** Claims of an admin: SUPER_ADMIN in `cognito:groups` (the default admin claim), in API Gateway's flattened form. */
export function adminClaims(sub = 'admin-1', extra: Claims = {}): Claims {
  return userClaims(sub, { 'cognito:groups': '[SUPER_ADMIN]', ...extra });
}

/** An event for `routeKey` (e.g. `POST /api/ai/quiz-generations`); the raw path has the parameters filled in. */
export function apiEvent(routeKey: string, options: EventOptions = {}): ApiEvent {
  const [method = 'GET', template = '/'] = routeKey.split(' ');
  const rawPath = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent((options.pathParameters?.[name] ?? '').toWellFormed()));
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const now = new Date();
  const headers: Record<string, string> = {
    host: 'api.test', 'user-agent': 'vitest',
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...Object.fromEntries(Object.entries(options.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
  };
  const query = options.query;
  const requestContext = {
    accountId: '123456789012', apiId: 'api-test', domainName: 'api.test', domainPrefix: 'api',
    http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
    requestId: newId(), routeKey, stage: '$default', time: now.toUTCString(), timeEpoch: now.getTime(),
    ...(options.claims === null
      ? {}
      : { authorizer: { principalId: '', integrationLatency: 0, jwt: { claims: options.claims ?? userClaims('user-1'), scopes: null } } }),
  };
  return {
    version: '2.0', routeKey, rawPath,
    rawQueryString: query ? new URLSearchParams(query).toString() : '',
    headers,
    ...(query ? { queryStringParameters: query } : {}),
    ...(options.pathParameters ? { pathParameters: options.pathParameters } : {}),
    ...(body !== undefined ? { body } : {}),
    isBase64Encoded: options.isBase64Encoded ?? false,
    requestContext,
  } as unknown as ApiEvent;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Record<string, string>;
  body: T;
  /** The body exactly as sent. */
  raw: string;
}

type Handler = (event: ApiEvent, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** Invokes `handler` with `event` and a Lambda-like context; parses a JSON body. */
export async function invoke<T = any>(handler: Handler, event: ApiEvent): Promise<ApiResponse<T>> {
  const result = await handler(event, lambdaContext());
  const raw = result.body ?? '';
  const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
  return { status: result.statusCode ?? 200, headers, body: raw ? JSON.parse(raw) : undefined, raw };
}

function lambdaContext(): Context {
  const deadline = Date.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false, functionName: 'api-test', functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:api-test', memoryLimitInMB: '512',
    awsRequestId: newId(), logGroupName: '/aws/lambda/api-test', logStreamName: 'test',
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: () => undefined, fail: () => undefined, succeed: () => undefined,
  };
}
