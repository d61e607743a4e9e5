/**
 * The local stand-in for AWS AppSync Events, on loopback (`npm start` prints its URLs): the same WebSocket
 * protocol at `ws://<host>:<port>/event/realtime` (subprotocols `aws-appsync-event-ws` and `header-<base64url>`)
 * and the same SigV4-signed HTTP publish at `http://<host>:<port>/event`, so the publisher and the client library
 * run unchanged against it and against AWS. Subscriptions are authorized with the tokens the local API accepts
 * and by the very rules the deployed onSubscribe handler runs (lib/realtime/subscribe-rules.ts).
 *
 * The connection's own token is verified when it opens: a refused one gets `connection_error`
 * (UnauthorizedException) and is closed. `ka` every `keepAliveIntervalMs`. Not emulated: the service's 24-hour
 * connection limit, its quotas and its exact error texts (docs/streaming.md "Local hub").
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { JWTPayload } from 'jose';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AwsCredentialIdentity } from '@smithy/types';
import {
  DEFAULT_CONNECTION_TIMEOUT_MS, EVENT_PATH, EVENT_WS_SUBPROTOCOL, EVENTS_ERROR_TYPES, REALTIME_PATH, headersOfAuthSubprotocol, tokenOf,
} from '../../realtime/events-protocol.ts';
import type { SubscribePolicy } from '../../realtime/subscribe-rules.ts';
import { HubChannels } from './realtime-hub-channels.ts';
import { HubConnection, type ConnectionContext } from './realtime-hub-connection.ts';
import { handlePublish } from './realtime-hub-publish.ts';

export interface RealtimeHubOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Verifies a token as the local API does; throws when it is refused (its message is reported). */
  verifyToken(token: string): Promise<JWTPayload>;
  policy: SubscribePolicy;
  /** The region and the one key pair whose signed publishes are accepted. */
  publisher: { region: string; credentials: AwsCredentialIdentity };
  keepAliveIntervalMs?: number;
  connectionTimeoutMs?: number;
  maxBufferedBytes?: number;
}

export interface RealtimeHub {
  /** The HTTP publish endpoint, e.g. http://127.0.0.1:3001/event (what REALTIME_HTTP_ENDPOINT names). */
  httpEndpoint: string;
  /** The WebSocket endpoint, e.g. ws://127.0.0.1:3001/event/realtime */
  realtimeUrl: string;
  port: number;
  /** Open connections and subscriptions now. */
  stats(): { connections: number; subscriptions: number };
  /** Closes every connection and stops listening. */
  stop(): Promise<void>;
}

export async function startRealtimeHub(o: RealtimeHubOptions): Promise<RealtimeHub> {
  const channels = new HubChannels();
  const region = o.publisher.region;
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    if (path !== EVENT_PATH) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ errorType: 'NotFound', message: 'Not Found' }] }));
      return;
    }
    handlePublish(req, res, { channels, region, credentials: o.publisher.credentials }).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has(EVENT_WS_SUBPROTOCOL) ? EVENT_WS_SUBPROTOCOL : false) });
  const context: ConnectionContext = {
    channels, verifyToken: o.verifyToken, policy: o.policy,
    connectionTimeoutMs: o.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS, maxBufferedBytes: o.maxBufferedBytes ?? 8 * 1024 * 1024,
  };
  /** Connections whose token verified: only they get `ka`. */
  const admitted = new Set<WebSocket>();
  server.on('upgrade', (req, socket, head) => upgrade(req, socket, head, wss, (ws, token) => accept(ws, token, o, context, admitted)));
  const keepAlive = setInterval(() => {
    for (const client of admitted) if (client.readyState === client.OPEN) client.send('{"type":"ka"}');
  }, o.keepAliveIntervalMs ?? 60_000);
  keepAlive.unref();
  const port = await listen(server, o.port, o.host ?? '127.0.0.1');
  const base = `127.0.0.1:${port}`;
  return {
    httpEndpoint: `http://${base}${EVENT_PATH}`, realtimeUrl: `ws://${base}${REALTIME_PATH}`, port,
    stats: () => ({ connections: wss.clients.size, subscriptions: channels.count() }),
    stop: async () => {
      clearInterval(keepAlive);
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

/** Accepts a WebSocket on the realtime path that offers the protocol's subprotocol; refuses anything else. */
function upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, wss: WebSocketServer, onOpen: (ws: WebSocket, token: string | undefined) => void): void {
  const path = new URL(req.url ?? '/', 'http://local').pathname;
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  if (path !== REALTIME_PATH || !offered.includes(EVENT_WS_SUBPROTOCOL)) {
    socket.end(`HTTP/1.1 ${path === REALTIME_PATH ? '400 Bad Request' : '404 Not Found'}\r\nConnection: close\r\n\r\n`);
    return;
  }
  const headers = offered.map(headersOfAuthSubprotocol).find((h) => h !== undefined);
  wss.handleUpgrade(req, socket, head, (ws) => onOpen(ws, tokenOf(headers)));
}

/**
 * Serves an opened connection once its token verifies (messages sent meanwhile wait); refuses it otherwise
 * with connection_error, then closes it.
 */
function accept(ws: WebSocket, token: string | undefined, o: RealtimeHubOptions, context: ConnectionContext, admitted: Set<WebSocket>): void {
  const refusal = token === undefined
    ? Promise.resolve('Missing authorization')
    : o.verifyToken(token).then(() => undefined, (err: Error) => err.message || 'Invalid token');
  const admission = refusal.then((reason) => {
    if (reason === undefined) {
      if (ws.readyState !== ws.OPEN) return false;
      admitted.add(ws);
      ws.on('close', () => admitted.delete(ws));
      return true;
    }
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'connection_error', errors: [{ errorType: EVENTS_ERROR_TYPES.unauthorized, message: reason }] }));
    ws.close(1008, 'Unauthorized');
    return false;
  });
  new HubConnection(ws, context, admission);
}

async function listen(server: http.Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as { port: number }).port;
}
