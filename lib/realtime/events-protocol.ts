/**
 * The AWS AppSync Events WebSocket protocol, as the local hub speaks it and the client reads it (no Node-only
 * import). Sources: https://docs.aws.amazon.com/appsync/latest/eventapi/event-api-websocket-protocol.html and the
 * AWS reference clients (aws-amplify/amplify-js packages/api-graphql AWSAppSyncEventsProvider and
 * AWSWebSocketProvider; aws-amplify/aws-appsync-events-swift).
 *
 * - Connect to `wss://<realtime domain>/event/realtime` with the subprotocols `aws-appsync-event-ws` and
 *   `header-<base64url(JSON of the authorization headers)>` (browsers cannot set headers on a WebSocket). For a
 *   JWT the headers are `{ host: <HTTP domain>, Authorization: <token> }`.
 * - Client → `{type:"connection_init"}`; server → `{type:"connection_ack", connectionTimeoutMs}` (GraphQL's older
 *   form nests it in `payload`), then `{type:"ka"}` periodically. No `ka` (or other message) within
 *   `connectionTimeoutMs`: the client closes and reconnects. A refused connection: `{type:"connection_error",
 *   errors:[{errorType, message}]}`.
 * - Client → `{type:"subscribe", id, channel, authorization:{…same headers…}}`; server → `subscribe_success` or
 *   `subscribe_error` `{id, errors:[{errorType, message}]}`; then `{type:"data", id, event:"<JSON text>"}` per
 *   event, or `broadcast_error` when one could not be delivered. `{type:"unsubscribe", id}` →
 *   `unsubscribe_success` / `unsubscribe_error`.
 * - `{type:"publish", id, channel, events:["<JSON text>",…], authorization}` → `publish_success`
 *   `{successful:[{identifier,index}], failed:[…]}` or `publish_error`. Our namespace allows IAM publishers only.
 * - HTTP publish: `POST https://<HTTP domain>/event` `{channel, events:["<JSON text>", …at most 5]}`, signed with
 *   SigV4 (service `appsync`); answer `{successful:[{identifier,index}], failed:[…]}`.
 */

/** The protocol's WebSocket subprotocol. */
export const EVENT_WS_SUBPROTOCOL = 'aws-appsync-event-ws';
/** Prefix of the subprotocol carrying the authorization headers. */
export const AUTH_SUBPROTOCOL_PREFIX = 'header-';
/** Path of the HTTP publish endpoint; the realtime endpoint is this plus `/realtime`. */
export const EVENT_PATH = '/event';
export const REALTIME_PATH = '/event/realtime';
/** AppSync Events: at most 5 events per publish request (publish-http.html). */
export const MAX_EVENTS_PER_PUBLISH = 5;
/** AppSync Events: at most 240 KB per event (event-api-concepts.html). */
export const MAX_EVENT_BYTES = 240 * 1024;
/** The keep-alive window AppSync announces in `connection_ack` (5 minutes). */
export const DEFAULT_CONNECTION_TIMEOUT_MS = 300_000;

/** Error types the service reports (`errorType`); a client decides on them, never on message text. */
export const EVENTS_ERROR_TYPES = {
  unauthorized: 'UnauthorizedException',
  badRequest: 'BadRequestException',
  unsupported: 'UnsupportedOperation',
  /** An event could not be delivered to a subscription. */
  messageProcessing: 'MessageProcessingError',
} as const;

export interface EventsError {
  errorType: string;
  message: string;
}

/** Messages a client sends. */
export type ClientMessage =
  | { type: 'connection_init' }
  | { type: 'subscribe'; id: string; channel: string; authorization: Record<string, string> }
  | { type: 'unsubscribe'; id: string }
  | { type: 'publish'; id: string; channel: string; events: string[]; authorization: Record<string, string> };

/** Messages the server sends. */
export type ServerMessage =
  | { type: 'connection_ack'; connectionTimeoutMs?: number; payload?: { connectionTimeoutMs?: number } }
  | { type: 'connection_error'; errors: EventsError[] }
  | { type: 'ka' }
  | { type: 'subscribe_success'; id: string }
  | { type: 'subscribe_error'; id: string; errors: EventsError[] }
  | { type: 'data'; id: string; event: string }
  | { type: 'broadcast_error'; id: string; errors: EventsError[] }
  | { type: 'unsubscribe_success'; id: string }
  | { type: 'unsubscribe_error'; id: string; errors: EventsError[] }
  | { type: 'publish_success'; id: string; successful: { identifier: string; index: number }[]; failed: unknown[] }
  | { type: 'publish_error'; id: string; errors: EventsError[] }
  | { type: 'error'; id?: string; errors: EventsError[] };

/** The authorization headers of a JWT caller: the HTTP domain as `host`, the token as `Authorization`. */
export function tokenAuthorization(httpHost: string, token: string): Record<string, string> {
  return { host: httpHost, Authorization: token };
}

/** The `header-…` subprotocol carrying `headers` (base64url of their JSON, without padding). */
export function authSubprotocol(headers: Record<string, string>): string {
  const bytes = new TextEncoder().encode(JSON.stringify(headers));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return AUTH_SUBPROTOCOL_PREFIX + btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** The headers a `header-…` subprotocol carries, or undefined when it is not one or does not decode. */
export function headersOfAuthSubprotocol(protocol: string): Record<string, string> | undefined {
  if (!protocol.startsWith(AUTH_SUBPROTOCOL_PREFIX)) return undefined;
  try {
    const b64 = protocol.slice(AUTH_SUBPROTOCOL_PREFIX.length).replaceAll('-', '+').replaceAll('_', '/');
    const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const parsed: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return undefined;
  }
}

/** The token of authorization headers (`Authorization`, any case, without a `Bearer ` prefix). */
export function tokenOf(headers: Record<string, unknown> | undefined): string | undefined {
  if (!headers) return undefined;
  const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'authorization');
  const value = typeof entry?.[1] === 'string' ? entry[1].trim() : '';
  const token = value.replace(/^Bearer\s+/i, '');
  return token === '' ? undefined : token;
}

/**
 * The realtime URL of an Event API's HTTP endpoint: `https://x.appsync-api.<region>.amazonaws.com/event` →
 * `wss://x.appsync-realtime-api.<region>.amazonaws.com/event/realtime` (as amplify-js derives it); a custom or
 * local endpoint keeps its host (`http://127.0.0.1:3001/event` → `ws://127.0.0.1:3001/event/realtime`).
 */
export function realtimeUrlOf(httpEndpoint: string): string {
  const url = new URL(httpEndpoint);
  url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
  url.hostname = url.hostname.replace('.appsync-api.', '.appsync-realtime-api.');
  url.pathname = url.pathname.replace(/\/+$/, '') + '/realtime';
  return url.toString();
}

/** A server message, or undefined when `text` is not one (the client ignores what it cannot read). */
export function parseServerMessage(text: unknown): ServerMessage | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const message: unknown = JSON.parse(text);
    return message !== null && typeof message === 'object' && typeof (message as { type?: unknown }).type === 'string'
      ? (message as ServerMessage)
      : undefined;
  } catch {
    return undefined;
  }
}
