/**
 * The local hub's HTTP publish endpoint, `POST /event`, as AppSync Events answers it for a namespace whose
 * publishers use IAM: the request must carry a SigV4 signature (service `appsync`) by the one key pair the hub
 * accepts (the local runtime's AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) → else 401 UnauthorizedException;
 * `{channel, events}` with a `jobs` channel (no wildcard) and 1–5 events, each the JSON text of a value, at most
 * 240 KB → else 400 BadRequestException; then 200 `{successful:[{identifier, index}], failed:[]}`.
 */
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AwsCredentialIdentity } from '@smithy/types';
import { channelSegments, JOBS_NAMESPACE } from '../../realtime/channel.ts';
import { EVENTS_ERROR_TYPES, MAX_EVENTS_PER_PUBLISH, MAX_EVENT_BYTES } from '../../realtime/events-protocol.ts';
import { verifyEventsSignature } from '../../realtime/sigv4.ts';
import type { HubChannels } from './realtime-hub-channels.ts';
import { readBodyUpTo } from '../read-body.ts';

/** Publish bodies above this are refused unread (5 events of 240 KB, escaped, fit well below). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface PublishContext {
  channels: HubChannels;
  region: string;
  credentials: AwsCredentialIdentity;
}

/** Answers a request to `/event`. */
export async function handlePublish(req: http.IncomingMessage, res: http.ServerResponse, ctx: PublishContext): Promise<void> {
  if (req.method !== 'POST') {
    req.resume();
    return answer(res, 405, failure(EVENTS_ERROR_TYPES.badRequest, 'Publish with POST'));
  }
  const body = (await readBodyUpTo(req, MAX_BODY_BYTES))?.toString('utf8');
  if (body === undefined) return answer(res, 413, failure(EVENTS_ERROR_TYPES.badRequest, 'Request too large'));
  const signed = await verifyEventsSignature(
    { method: 'POST', host: req.headers.host ?? '', path: req.url ?? '/event', headers: req.headers, body }, ctx.region, ctx.credentials,
  ).catch(() => false);
  if (!signed) return answer(res, 401, failure(EVENTS_ERROR_TYPES.unauthorized, 'Publishing requires a valid IAM (SigV4) signature'));
  const request = parsePublish(body);
  if (typeof request === 'string') return answer(res, 400, failure(EVENTS_ERROR_TYPES.badRequest, request));
  ctx.channels.deliver(request.channel, request.events);
  answer(res, 200, { successful: request.events.map((_, index) => ({ identifier: randomUUID(), index })), failed: [] });
}

/** The channel (normalized) and events of a publish body, or why it is refused. */
export function parsePublish(body: string): { channel: string; events: string[] } | string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return 'Body must be JSON';
  }
  const { channel, events } = (value ?? {}) as { channel?: unknown; events?: unknown };
  const segments = typeof channel === 'string' ? channelSegments(channel, { wildcard: false }) : undefined;
  if (!segments) return 'Invalid Channel Format';
  if (segments[0] !== JOBS_NAMESPACE) return `No channel namespace ${segments[0]}`;
  if (!Array.isArray(events) || events.length < 1 || events.length > MAX_EVENTS_PER_PUBLISH) return `events must hold 1 to ${MAX_EVENTS_PER_PUBLISH} events`;
  for (const event of events) {
    if (typeof event !== 'string' || !isJsonText(event)) return 'Each event must be the JSON text of a value';
    if (Buffer.byteLength(event, 'utf8') > MAX_EVENT_BYTES) return 'Event exceeds 240 KB';
  }
  return { channel: `/${segments.join('/')}`, events: events as string[] };
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function failure(errorType: string, message: string) {
  return { errors: [{ errorType, message }] };
}

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

