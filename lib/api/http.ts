/**
 * Reading API Gateway HTTP API (payload 2.0) events and writing their responses. Every reader validates
 * before anything else runs: a bad body, query, path parameter or header is a typed 400 (or 413) raised
 * before any database or AWS call.
 */
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { z } from 'zod';
import { toIssueDetails } from '../jobs/errors.ts';
import { PayloadTooLargeError, RequestValidationError, UnsupportedMediaTypeError } from './http-errors.ts';
import { findIllFormedText, illFormedIssue } from './well-formed.ts';
import { MAX_BODY_BYTES } from './request-schemas.ts';

export type ApiEvent = APIGatewayProxyEventV2WithJWTAuthorizer;
export type ApiResult = APIGatewayProxyStructuredResultV2;

/** Where a request field was found; prefixes issue paths (`body.concept`, `query.limit`). */
export type FieldLocation = 'body' | 'query' | 'path' | 'header';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** A JSON response. */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResult {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** An empty response (204). */
export function noContent(): ApiResult {
  return { statusCode: 204, headers: { 'cache-control': 'no-store' } };
}

/**
 * The request body as text (base64 decoded when API Gateway encoded it), or undefined when there is none.
 * @throws PayloadTooLargeError past {@link MAX_BODY_BYTES}
 */
export function bodyText(event: Pick<ApiEvent, 'body' | 'isBase64Encoded'>): string | undefined {
  const raw = event.body;
  if (raw === undefined || raw === null || raw === '') return undefined;
  // Checked on the raw text first, so a huge body is refused without being decoded.
  if (raw.length > (event.isBase64Encoded ? Math.ceil((MAX_BODY_BYTES * 4) / 3) + 4 : MAX_BODY_BYTES)) {
    throw new PayloadTooLargeError(MAX_BODY_BYTES);
  }
  const text = event.isBase64Encoded ? decodeUtf8(Buffer.from(raw, 'base64')) : raw;
  if (Buffer.byteLength(text, 'utf8') > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  return text;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Bytes as UTF-8, refusing invalid sequences instead of replacing them with U+FFFD (a silent change). */
function decodeUtf8(bytes: Uint8Array): string {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw new RequestValidationError([{ path: 'body', message: 'must be UTF-8' }]);
  }
}

/**
 * Refuses a body sent as anything but JSON: `Content-Type` must be `application/json`, optionally with
 * `charset=utf-8`. A request without a body passes whatever its headers say.
 * @throws UnsupportedMediaTypeError
 */
export function assertJsonContentType(event: Pick<ApiEvent, 'body' | 'headers'>): void {
  if (event.body === undefined || event.body === null || event.body === '') return;
  const [mediaType = '', ...params] = (headerOf(event, 'content-type') ?? '').split(';').map((p) => p.trim().toLowerCase());
  if (mediaType !== 'application/json') throw new UnsupportedMediaTypeError();
  for (const param of params) {
    const [name, value = ''] = param.split('=').map((p) => p.trim());
    if (name === 'charset' && value.replace(/^"|"$/g, '') !== 'utf-8') throw new UnsupportedMediaTypeError();
  }
}

/**
 * Refuses ill-formed Unicode in path or query parameters (names and values).
 * @throws RequestValidationError naming `<location>.<name>`
 */
export function assertWellFormedParams(params: Record<string, string | undefined> | undefined | null, location: 'path' | 'query'): void {
  const bad = findIllFormedText(params ?? {});
  if (bad !== undefined) throw new RequestValidationError([illFormedIssue(location, bad)]);
}

/**
 * The body parsed as JSON.
 * @throws RequestValidationError when it is missing, not JSON, or holds ill-formed Unicode; PayloadTooLargeError as {@link bodyText}
 */
export function jsonBody(event: Pick<ApiEvent, 'body' | 'isBase64Encoded'>): unknown {
  const text = bodyText(event);
  if (text === undefined) throw new RequestValidationError([{ path: 'body', message: 'a JSON body is required' }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RequestValidationError([{ path: 'body', message: 'must be valid JSON' }]);
  }
  const bad = findIllFormedText(parsed);
  if (bad !== undefined) throw new RequestValidationError([illFormedIssue('body', bad)]);
  return parsed;
}

/**
 * `value` parsed by `schema`.
 * @throws RequestValidationError listing every failing field as `<location>.<path>`
 */
export function parseField<S extends z.ZodType>(schema: S, value: unknown, location: FieldLocation): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new RequestValidationError(
    toIssueDetails(result.error).map((i) => ({ path: i.path ? `${location}.${i.path}` : location, message: i.message })),
  );
}

/** A header's value (API Gateway lower-cases names; matched case-insensitively anyway). */
export function headerOf(event: Pick<ApiEvent, 'headers'>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}

/**
 * An optional header parsed by `schema`; undefined when absent.
 * @throws RequestValidationError naming `header.<name>`
 */
export function optionalHeader<S extends z.ZodType>(event: Pick<ApiEvent, 'headers'>, name: string, schema: S): z.output<S> | undefined {
  const value = headerOf(event, name);
  if (value === undefined) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new RequestValidationError(toIssueDetails(result.error).map((i) => ({ path: `header.${name.toLowerCase()}`, message: i.message })));
}
