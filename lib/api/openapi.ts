/**
 * The OpenAPI 3.1 document of both APIs, generated from the route tables (./routes.ts) and the zod schemas
 * with zod's `z.toJSONSchema` (JSON Schema 2020-12, which OpenAPI 3.1 uses). The committed copy is
 * docs/openapi.json (`npm run openapi`); test/api/openapi.test.ts fails when it is stale.
 */
import * as z from 'zod';
import { jobRegistry, type JobDefinitionRegistry } from '../jobs/registry.ts';
import { JOB_RESULT_READERS } from './job-results.ts';
import { QUERY_SCHEMAS, idempotencyKeySchema, jobIdSchema, putCredentialBodySchema } from './request-schemas.ts';
import { responseSchemas } from './response-schemas.ts';
import { setModelLimitsBodySchema, setSpendCapBodySchema } from './budget-schemas.ts';
import { ADMIN_ROUTES, STREAM_ROUTES, USER_ROUTES, type AdminAction, type ApiRoute, type StreamAction, type UserAction } from './routes.ts';

type Json = Record<string, unknown>;
type Action = UserAction | AdminAction | StreamAction;

const COMPONENTS = '#/components/schemas/';
const ref = (id: string) => ({ $ref: `${COMPONENTS}${id}` });

/**
 * Per action: tag, success responses (status → response component, or null for no body), and the statuses the
 * handler itself may answer besides the ones every route can ({@link EVERY_ROUTE}).
 */
const ACTIONS: Record<Action, { tag: string; success: Record<number, string | null | 'result'>; errors: number[] }> = {
  createJob: { tag: 'jobs', success: { 202: 'JobStatusResponse' }, errors: [409] },
  getJob: { tag: 'jobs', success: { 200: 'JobStatusResponse' }, errors: [] },
  listJobs: { tag: 'jobs', success: { 200: 'JobListResponse' }, errors: [] },
  cancelJob: { tag: 'jobs', success: { 200: 'JobStatusResponse', 202: 'JobStatusResponse' }, errors: [409] },
  getJobResult: { tag: 'results', success: { 200: 'result' }, errors: [409] },
  getCredential: { tag: 'credentials', success: { 200: 'CredentialResponse' }, errors: [] },
  putCredential: { tag: 'credentials', success: { 200: 'CredentialResponse' }, errors: [] },
  deleteCredential: { tag: 'credentials', success: { 204: null }, errors: [] },
  getRealtimeConfig: { tag: 'jobs', success: { 200: 'RealtimeConfig' }, errors: [] },
  adminListJobs: { tag: 'admin', success: { 200: 'AdminJobListResponse' }, errors: [403] },
  adminGetJob: { tag: 'admin', success: { 200: 'AdminJobDetail' }, errors: [403] },
  adminRetryJob: { tag: 'admin', success: { 201: 'AdminJobDetail', 200: 'AdminJobDetail' }, errors: [403, 409] },
  adminCancelJob: { tag: 'admin', success: { 200: 'AdminJobDetail', 202: 'AdminJobDetail' }, errors: [403, 409] },
  adminStats: { tag: 'admin', success: { 200: 'StatsResponse' }, errors: [403] },
  adminUsage: { tag: 'admin', success: { 200: 'UsageReport' }, errors: [403] },
  adminUsageByUser: { tag: 'admin', success: { 200: 'UsageReport' }, errors: [403] },
  adminReaperReport: { tag: 'admin', success: { 200: 'ReaperReport' }, errors: [403] },
  streamJob: { tag: 'jobs', success: { 200: 'StreamPage' }, errors: [] },
  adminStreamJob: { tag: 'admin', success: { 200: 'StreamPage' }, errors: [403] },
  getSpend: { tag: 'budgets', success: { 200: 'UserSpendResponse' }, errors: [] },
  adminBudgets: { tag: 'admin', success: { 200: 'BudgetsResponse' }, errors: [403] },
  adminSetModelLimits: { tag: 'admin', success: { 200: 'ModelCapacity' }, errors: [403] },
  adminResetModelLimits: { tag: 'admin', success: { 200: 'ModelCapacity' }, errors: [403] },
  adminEndCooldown: { tag: 'admin', success: { 200: 'ModelCapacity' }, errors: [403] },
  adminSetSpendCap: { tag: 'admin', success: { 200: 'SpendUse' }, errors: [403] },
  adminResetSpendCap: { tag: 'admin', success: { 200: 'SpendCapReset' }, errors: [403] },
};

/** How a client reads a job's stream log (both stream routes). */
const STREAM_DESCRIPTION = [
  'A job\'s stream log: every status change the owner may see (queued, running with its attempt, a retry scheduled with',
  '`retryAt` and the public error, succeeded with `resultUrl`, failed with the public error, cancelled) and, while an',
  'attempt runs, its output as the model writes it (text of a field, items of an array field), in `seq` order from 1.',
  'Keep the last `seq` you hold and ask for what follows it (`after`); entries are never changed or reordered, so a',
  'page repeats nothing and skips nothing. With `wait` (seconds, at most 20) the request is held until an entry after',
  '`after` exists or the wait ends (the server holds at most 18 s), then answered with what there is, possibly nothing:',
  'ask again with the same `after`. A `running` entry starts a new attempt: drop the text and items shown before it.',
  'docs/streaming.md.',
].join(' ');

/**
 * What any route can answer, from the handler (`ErrorResponse`), from API Gateway (`GatewayErrorResponse`,
 * `{"message": …}`), or from either. The router checks auth, body size, content type, path and query on every
 * route; API Gateway's JWT authorizer, payload and header limits, stage throttling and integration failures
 * apply to every route too.
 */
const EVERY_ROUTE: Record<number, 'ours' | 'gateway' | 'both'> = {
  400: 'ours', 401: 'both', 404: 'both', 413: 'both', 415: 'ours', 429: 'both', 431: 'gateway', 500: 'both', 503: 'both',
};

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created (a new retry job)', 202: 'Accepted', 204: 'No content',
  400: 'VALIDATION_FAILED: malformed body, query, path parameter or header, or text that is not well-formed Unicode (field paths in `details`)',
  401: 'API Gateway\'s JWT authorizer: `{"message":"Unauthorized"}` (missing, invalid or expired token); or UNAUTHORIZED from the handler (a token whose `sub` cannot be a user id)',
  403: 'FORBIDDEN: the admin group is required (API Gateway answers `{"message":"Forbidden"}` when the route\'s authorization scopes are missing)',
  404: 'JOB_NOT_FOUND / CREDENTIAL_NOT_FOUND (another user\'s job is reported as not found); API Gateway answers `{"message":"Not Found"}` for a path no route matches',
  409: 'Conflict: IDEMPOTENCY_KEY_REUSED, JOB_NOT_CANCELLABLE, JOB_ALREADY_CANCELLED, JOB_RESULT_NOT_AVAILABLE, JOB_NOT_RETRYABLE or SNAPSHOT_EXPIRED',
  413: 'PAYLOAD_TOO_LARGE: the body exceeds 64 KiB; API Gateway answers `{"message":"Request Entity Too Large"}` past its 10 MB',
  415: 'UNSUPPORTED_MEDIA_TYPE: a body sent with a Content-Type other than application/json (UTF-8)',
  429: 'TOO_MANY_JOBS (active jobs of the type at the limit), QUOTA_EXCEEDED (daily quota used up), SPEND_LIMIT_REACHED (a spending cap that applies to the job is reached; Retry-After: its UTC period\'s end) or TOO_MANY_KEY_WRITES (10 key stores within the hour), with Retry-After; API Gateway\'s stage throttling answers `{"message":"Too Many Requests"}`',
  431: 'API Gateway: request line and header values above 10240 bytes, `{"message":"Request Header Fields Too Large"}`',
  500: 'INTERNAL: unexpected error (no detail); API Gateway answers `{"message":"Internal Server Error"}` when the function fails',
  503: 'PLATFORM_UNAVAILABLE with Retry-After: the database or another platform service is unreachable, dropped the connection, or stayed contended; API Gateway answers `{"message":"Service Unavailable"}` when the integration times out. Not proof that nothing happened: a create may have committed — repeat it with the same Idempotency-Key',
};

/** API Gateway's own error body, e.g. `{"message":"Unauthorized"}`. */
const GATEWAY_ERROR_SCHEMA: Json = {
  type: 'object',
  description: 'A response API Gateway produced itself (never the handler)',
  properties: { message: { type: 'string', examples: ['Unauthorized', 'Not Found', 'Too Many Requests'] } },
  required: ['message'],
  additionalProperties: false,
};

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before trying again (responses from the handler)', schema: { type: 'integer' } } };

const NOT_PROOF_OF_FAILURE = 'A 5xx, a timeout or a cut connection does not mean the job was not created: the transaction may have '
  + 'committed before the failure. Send an Idempotency-Key with every create and repeat the request with the same key '
  + 'to get the job that exists, or the one that is then created.';

/** The document; `registry` supplies the creation routes' input schemas (default: the process-wide one). */
export function buildOpenApiDocument(registry: JobDefinitionRegistry = jobRegistry): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of [...USER_ROUTES, ...ADMIN_ROUTES, ...STREAM_ROUTES] as readonly ApiRoute<Action>[]) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'AI Job Engine API',
      version: '1.0.0',
      description: [
        'User routes (/api/ai) and admin routes (/admin-api/ai, the configured admin group).',
        'Every error the API itself produces is `{ "error": { "code", "message" } }` (`ErrorResponse`). Responses API Gateway',
        'produces on its own — its JWT authorizer (401), unknown paths (404), payload and header limits (413, 431), stage',
        'throttling (429), integration failures (500, 503) — have its shape `{ "message" }` (`GatewayErrorResponse`); each',
        `response lists which shapes it can carry. ${NOT_PROOF_OF_FAILURE}`,
      ].join(' '),
    },
    security: [{ bearerAuth: [] }],
    tags: [{ name: 'jobs' }, { name: 'results' }, { name: 'credentials' }, { name: 'budgets' }, { name: 'admin' }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: sortedKeys({ ...requestComponents(registry), ...componentsOf(responseSchemas, 'output'), GatewayErrorResponse: GATEWAY_ERROR_SCHEMA }),
    },
  };
}

/** The document as committed: two-space JSON with a final newline. */
export function renderOpenApiDocument(registry?: JobDefinitionRegistry): string {
  return `${JSON.stringify(buildOpenApiDocument(registry), null, 2)}\n`;
}

/** Headers of a success answer beyond Content-Type (infra/http-api.ts exposes each of them to browsers). */
function responseHeaders(action: Action, status: string): Record<string, Json> | undefined {
  const location = { description: 'The job status URL', schema: { type: 'string' } };
  if (action === 'createJob' && status === '202') {
    return { Location: location, 'Idempotent-Replayed': { description: '`true` when the Idempotency-Key repeated an earlier create and this is its job', schema: { type: 'string', enum: ['true'] } } };
  }
  if (action === 'adminRetryJob') return { Location: { ...location, description: 'The new (201) or existing (200) job\'s admin URL' } };
  return undefined;
}

function operationOf(route: ApiRoute<Action>): Json {
  const spec = ACTIONS[route.action];
  const operation: Json = { operationId: route.operationId, summary: route.summary, tags: [spec.tag] };
  if (route.action === 'createJob' || route.action === 'adminRetryJob') operation.description = NOT_PROOF_OF_FAILURE;
  if (route.action === 'streamJob' || route.action === 'adminStreamJob') operation.description = STREAM_DESCRIPTION;
  const parameters = [...pathParameters(route), ...queryParameters(route.action)];
  if (route.action === 'createJob') {
    parameters.push({
      name: 'Idempotency-Key', in: 'header', required: false, schema: schemaOf(idempotencyKeySchema, 'input'),
      description: 'Recommended on every create. Repeating a request with the same key returns the first job (header `Idempotent-Replayed: true`); reusing it with another body is a 409',
    });
  }
  if (parameters.length > 0) operation.parameters = parameters;
  const body = requestBodyId(route);
  if (body) operation.requestBody = { required: true, content: { 'application/json': { schema: ref(body) } } };
  const responses: Record<string, Json> = {};
  for (const [status, id] of Object.entries(spec.success)) {
    const schemaId = id === 'result' ? resultSchemaId(route) : id;
    const headers = responseHeaders(route.action, status);
    responses[status] = {
      description: STATUS_TEXT[Number(status)],
      ...(headers ? { headers } : {}),
      ...(schemaId ? { content: { 'application/json': { schema: ref(schemaId) } } } : {}),
    };
  }
  const errors: Record<number, 'ours' | 'gateway' | 'both'> = { ...EVERY_ROUTE };
  for (const status of spec.errors) errors[status] = status === 403 ? 'both' : 'ours';
  for (const status of Object.keys(errors).map(Number).sort()) {
    const shape = errors[status]!;
    const schema = shape === 'ours' ? ref('ErrorResponse') : shape === 'gateway' ? ref('GatewayErrorResponse') : { anyOf: [ref('ErrorResponse'), ref('GatewayErrorResponse')] };
    responses[String(status)] = {
      description: STATUS_TEXT[status],
      ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
      content: { 'application/json': { schema } },
    };
  }
  operation.responses = responses;
  return operation;
}

function pathParameters(route: ApiRoute): Json[] {
  if (!route.path.includes('{jobId}')) return [];
  return [{ name: 'jobId', in: 'path', required: true, schema: schemaOf(jobIdSchema, 'input') }];
}

function queryParameters(action: Action): Json[] {
  const schema = QUERY_SCHEMAS[action];
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => {
    const { description, ...fieldSchema } = schemaOf(field, 'input');
    return { name, in: 'query', required: !field.safeParse(undefined).success, ...(description ? { description } : {}), schema: fieldSchema };
  });
}

/** `FeynmanEvaluationInput` for `feynman_evaluation`. */
function inputSchemaId(jobType: string): string {
  return `${jobType.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}Input`;
}

function requestBodyId(route: ApiRoute<Action>): string | undefined {
  if (route.action === 'createJob' && route.jobType) return inputSchemaId(route.jobType);
  if (route.action === 'putCredential') return 'PutCredentialRequest';
  if (route.action === 'adminSetModelLimits') return 'SetModelLimitsRequest';
  if (route.action === 'adminSetSpendCap') return 'SetSpendCapRequest';
  return undefined;
}

function resultSchemaId(route: ApiRoute): string {
  const reader = route.jobType ? JOB_RESULT_READERS.get(route.jobType) : undefined;
  const id = reader ? responseSchemas.get(reader.schema)?.id : undefined;
  if (!id) throw new RangeError(`route ${route.operationId} has no registered result schema`);
  return id;
}

/** Request bodies: every creation route's job input schema (as clients send it: `io: 'input'`) and the credential body. */
function requestComponents(registry: JobDefinitionRegistry): Record<string, Json> {
  const requests = z.registry<{ id: string }>();
  requests.add(putCredentialBodySchema, { id: 'PutCredentialRequest' });
  requests.add(setModelLimitsBodySchema, { id: 'SetModelLimitsRequest' });
  requests.add(setSpendCapBodySchema, { id: 'SetSpendCapRequest' });
  for (const route of USER_ROUTES) {
    if (route.action === 'createJob') requests.add(registry.get(route.jobType).inputSchema, { id: inputSchemaId(route.jobType) });
  }
  return componentsOf(requests, 'input');
}

function componentsOf(registry: z.core.$ZodRegistry<{ id: string }>, io: 'input' | 'output'): Record<string, Json> {
  const { schemas } = z.toJSONSchema(registry, { io, target: 'draft-2020-12', uri: (id) => `${COMPONENTS}${id}` });
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, withoutMeta(schema as Json)]));
}

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  return withoutMeta(z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as Json);
}

/** Components sorted by name, so the document does not depend on the order modules registered their schemas in. */
function sortedKeys(record: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(Object.keys(record).sort().map((key) => [key, record[key]!]));
}

/** Drops `$schema` and `$id`: an OpenAPI document states its dialect once. */
function withoutMeta(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}
