/**
 * The console on the local runtime: static files and deep links under /console/, the local sign-in route
 * (admin token for the console, refused to other origins and non-loopback hosts), and its absence from the
 * deployed API routes.
 */
import http from 'node:http';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN_ROUTES, USER_ROUTES } from '../../lib/api/routes.ts';
import { LOCAL_CONSOLE_TOKEN_PATH } from '../../lib/dev/local-runtime/console-routes.ts';
import { startLocalRuntime, type LocalRuntime } from '../../lib/dev/local-runtime/runtime.ts';
import { FAST_TIMING } from '../helpers/engine-harness.ts';

let runtime: LocalRuntime;

beforeAll(async () => {
  const dist = await mkdtemp(join(tmpdir(), 'console-dist-'));
  await mkdir(join(dist, 'assets'));
  await writeFile(join(dist, 'index.html'), '<!doctype html><title>console</title>');
  await writeFile(join(dist, 'assets', 'app.js'), 'export {};');
  runtime = await startLocalRuntime({
    databaseUrl: process.env.DATABASE_URL ?? '', port: 0, awsEndpoint: inject('awsEndpoint'), useMoto: false,
    timing: FAST_TIMING, consoleDistDir: dist, log: () => undefined,
  });
});
afterAll(() => runtime?.stop());

describe('the console on the local runtime', () => {
  it('serves index.html for the console\'s own paths, assets by name, with security headers', async () => {
    for (const path of ['/console/', '/console/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV']) {
      const res = await fetch(`${runtime.url}${path}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<title>console</title>');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    }
    const asset = await fetch(`${runtime.url}/console/assets/app.js`);
    expect(asset.headers.get('content-type')).toContain('text/javascript');
    expect((await fetch(`${runtime.url}/console/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${runtime.url}/console/config.json`).then((r) => r.json()))).toEqual({ signIn: 'local', realtime: { httpEndpoint: runtime.realtime!.httpEndpoint } });
  });

  it('tells the console where the realtime hub is, and lets its page open the hub\'s WebSocket', async () => {
    const res = await fetch(`${runtime.url}/console/`);
    const hubOrigin = new URL(runtime.realtime!.realtimeUrl).origin;
    expect(hubOrigin).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(res.headers.get('content-security-policy')).toContain(`connect-src 'self' ${hubOrigin};`);
  });

  it('mints an admin token the admin API accepts', async () => {
    const res = await fetch(`${runtime.url}${LOCAL_CONSOLE_TOKEN_PATH}`, { method: 'POST', headers: { origin: runtime.url } });
    expect(res.status).toBe(200);
    const { token, userId } = (await res.json()) as { token: string; userId: string };
    expect(userId).toBe('local-admin');
    const stats = await fetch(`${runtime.url}/admin-api/ai/stats`, { headers: { authorization: `Bearer ${token}` } });
    expect(stats.status).toBe(200);
  });

  it('refuses other origins and non-loopback hosts, and answers no CORS', async () => {
    const foreign = await fetch(`${runtime.url}${LOCAL_CONSOLE_TOKEN_PATH}`, { method: 'POST', headers: { origin: 'http://evil.example' } });
    expect(foreign.status).toBe(403);
    // fetch cannot set Host; node:http can, as a rebound DNS name would.
    const rebound = await new Promise<number>((resolve, reject) => {
      http.request(`${runtime.url}${LOCAL_CONSOLE_TOKEN_PATH}`, { method: 'POST', headers: { host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject).end();
    });
    expect(rebound).toBe(403);
    const ok = await fetch(`${runtime.url}${LOCAL_CONSOLE_TOKEN_PATH}`, { method: 'POST' });
    expect(ok.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('is not a deployed API route', () => {
    const paths = [...USER_ROUTES, ...ADMIN_ROUTES].map((r) => r.path);
    expect(paths.some((p) => p.startsWith('/local/') || p.startsWith('/console'))).toBe(false);
  });
});
