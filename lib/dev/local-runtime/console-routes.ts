/**
 * The admin console on the local runtime: the built files of console/dist under `/console/` (any other
 * path under it gets index.html, the console routes in the browser), `/console/config.json` saying sign-in
 * is local, and `POST /local/console-token`, which mints a one-hour admin token for the console.
 *
 * The token route exists only here: it is not in lib/api/routes.ts, so no deployed stage has it. It only
 * answers requests addressed to a loopback host (no DNS rebinding) and, when the browser sends an Origin,
 * from the runtime's own origin (no other page can use it); anyone who can run `npm run token` can do the same.
 */
import type http from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { signLocalToken, type LocalJwtKey, type TokenAudience } from '../../api/local-jwt.ts';

/** Path prefix the console is served under (vite's `base`). */
export const CONSOLE_PATH = '/console/';
export const LOCAL_CONSOLE_TOKEN_PATH = '/local/console-token';
/** The `sub` of tokens minted for the console. */
export const LOCAL_CONSOLE_ADMIN = 'local-admin';
const TOKEN_TTL_SECONDS = 3600;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon',
};

/** The same headers CloudFront's response-headers policy sets on a deployed stage. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export interface ConsoleRoutesOptions {
  distDir: string;
  jwtKey: LocalJwtKey;
  audience: TokenAudience;
  /** When set (local-oidc.ts), config.json asks the console to sign in through this issuer, as on a stage. */
  oidc?: { issuer: string; clientId: string };
  /** The local realtime hub: config.json names its endpoint, and the CSP lets the page open its WebSocket. */
  realtime?: { httpEndpoint: string; realtimeUrl: string };
}

/** A request handler for the console's paths; resolves false for any other path (the API's). */
export function createConsoleRoutes(o: ConsoleRoutesOptions) {
  return async (req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === LOCAL_CONSOLE_TOKEN_PATH) {
      await mintToken(req, res, o);
      return true;
    }
    if (path === '/console') {
      res.writeHead(302, { location: CONSOLE_PATH }).end();
      return true;
    }
    if (!path.startsWith(CONSOLE_PATH)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return true;
    }
    const headers = securityHeaders(o);
    if (path === `${CONSOLE_PATH}config.json`) {
      const signIn = o.oidc ? { signIn: 'oidc', issuer: o.oidc.issuer, clientId: o.oidc.clientId } : { signIn: 'local' };
      const config = { ...signIn, ...(o.realtime ? { realtime: { httpEndpoint: o.realtime.httpEndpoint } } : {}) };
      send(res, 200, '.json', JSON.stringify(config), 'no-store', headers);
      return true;
    }
    await serveFile(path.slice(CONSOLE_PATH.length), res, o.distDir, headers);
    return true;
  };
}

/**
 * {@link CONSOLE_SECURITY_HEADERS}, with a trusted OIDC issuer's origin allowed to be fetched (discovery, token)
 * and the realtime hub's WebSocket origin allowed to be opened.
 */
function securityHeaders(o: ConsoleRoutesOptions): Readonly<Record<string, string>> {
  const extra = [o.oidc ? new URL(o.oidc.issuer).origin : '', o.realtime ? new URL(o.realtime.realtimeUrl).origin : ''].filter(Boolean);
  if (extra.length === 0) return CONSOLE_SECURITY_HEADERS;
  const csp = CONSOLE_SECURITY_HEADERS['content-security-policy']!.replace("connect-src 'self'", `connect-src 'self' ${extra.join(' ')}`);
  return { ...CONSOLE_SECURITY_HEADERS, 'content-security-policy': csp };
}

async function serveFile(relative: string, res: http.ServerResponse, distDir: string, headers: Readonly<Record<string, string>>): Promise<void> {
  const file = normalize(join(distDir, relative));
  const inside = file.startsWith(`${normalize(distDir)}/`) && !relative.split('/').includes('..');
  const asset = inside && extname(file) !== '' ? await readFile(file).catch(() => null) : null;
  if (asset) return send(res, 200, extname(file), asset, relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache', headers);
  if (inside && extname(file) !== '') return send(res, 404, '.json', JSON.stringify({ message: 'Not Found' }), 'no-store', headers);
  const index = await readFile(join(distDir, 'index.html')).catch(() => null);
  if (!index) return send(res, 503, '.html', 'The console is not built: run <code>npm run console:build</code>.', 'no-store', headers);
  send(res, 200, '.html', index, 'no-cache', headers);
}

async function mintToken(req: http.IncomingMessage, res: http.ServerResponse, o: ConsoleRoutesOptions): Promise<void> {
  const host = req.headers.host ?? '';
  const hostname = host.replace(/:\d+$/, '');
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(hostname)) return send(res, 403, '.json', JSON.stringify({ message: 'Forbidden' }), 'no-store');
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${host}`) return send(res, 403, '.json', JSON.stringify({ message: 'Forbidden' }), 'no-store');
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  const token = await signLocalToken(o.jwtKey, { sub: LOCAL_CONSOLE_ADMIN, admin: true, expiresIn: TOKEN_TTL_SECONDS, ...o.audience });
  const expiresAt = new Date(Date.now() + TOKEN_TTL_SECONDS * 1000).toISOString();
  send(res, 200, '.json', JSON.stringify({ token, userId: LOCAL_CONSOLE_ADMIN, expiresAt }), 'no-store');
}

function send(
  res: http.ServerResponse, status: number, ext: string, body: string | Buffer, cacheControl: string, headers: Readonly<Record<string, string>> = CONSOLE_SECURITY_HEADERS,
): void {
  res.writeHead(status, { 'content-type': CONTENT_TYPES[ext] ?? 'application/octet-stream', 'cache-control': cacheControl, ...headers });
  res.end(body);
}
