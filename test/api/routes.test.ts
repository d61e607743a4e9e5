import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ADMIN_OPERATIONS } from '../../lib/api/admin-api.ts';
import { JOB_RESULT_READERS } from '../../lib/api/job-results.ts';
import { decodeCursor, encodeCursor } from '../../lib/api/pagination.ts';
import { ADMIN_ROUTES, STREAM_ROUTES, USER_ROUTES, matchRoute, routeKeyOf } from '../../lib/api/routes.ts';
import { STREAM_OPERATIONS } from '../../lib/api/stream-api.ts';
import { USER_OPERATIONS } from '../../lib/api/user-api.ts';
import { newId } from '../../lib/db/ids.ts';
import { jobRegistry } from '../../lib/jobs/registry.ts';

describe('route tables', () => {
  const all = [...USER_ROUTES, ...ADMIN_ROUTES, ...STREAM_ROUTES];

  it('have unique route keys and operation ids', () => {
    expect(new Set(all.map(routeKeyOf)).size).toBe(all.length);
    expect(new Set(all.map((r) => r.operationId)).size).toBe(all.length);
  });

  it('keep user routes under /api/ai and admin routes under /admin-api/ai', () => {
    for (const r of USER_ROUTES) expect(r.path.startsWith('/api/ai/')).toBe(true);
    for (const r of ADMIN_ROUTES) expect(r.path.startsWith('/admin-api/ai/')).toBe(true);
    for (const r of STREAM_ROUTES) expect(r.path.startsWith(r.access === 'admin' ? '/admin-api/ai/' : '/api/ai/')).toBe(true);
  });

  it('give every action an operation and every operation a route', () => {
    expect(new Set(USER_ROUTES.map((r) => r.action))).toEqual(new Set(Object.keys(USER_OPERATIONS)));
    expect(new Set(ADMIN_ROUTES.map((r) => r.action))).toEqual(new Set(Object.keys(ADMIN_OPERATIONS)));
    expect(new Set(STREAM_ROUTES.map((r) => r.action))).toEqual(new Set(Object.keys(STREAM_OPERATIONS)));
  });

  it('map creation and result routes to registered job types with a result reader; no generic creation route', () => {
    const perType = USER_ROUTES.filter((r) => r.action === 'createJob' || r.action === 'getJobResult');
    for (const route of perType) {
      expect(jobRegistry.has(route.jobType)).toBe(true);
      expect(JOB_RESULT_READERS.has(route.jobType)).toBe(true);
    }
    const created = USER_ROUTES.filter((r) => r.action === 'createJob').map((r) => r.jobType);
    const readable = USER_ROUTES.filter((r) => r.action === 'getJobResult').map((r) => r.jobType);
    expect(new Set(created)).toEqual(new Set(readable));
    expect(USER_ROUTES.map(routeKeyOf)).not.toContain('POST /api/ai/jobs');
  });

  it('is a module CDK can import: no imports at all', async () => {
    const source = await readFile(new URL('../../lib/api/routes.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*import\s/m);
  });
});

describe('matchRoute (for the local runtime)', () => {
  it('matches literal and parameter segments and yields the routeKey and decoded path parameters', () => {
    const id = newId();
    expect(matchRoute(USER_ROUTES, 'post', `/api/ai/jobs/${id}/cancel`)).toMatchObject({
      routeKey: 'POST /api/ai/jobs/{jobId}/cancel', pathParameters: { jobId: id },
    });
    expect(matchRoute(USER_ROUTES, 'GET', '/api/ai/jobs')?.routeKey).toBe('GET /api/ai/jobs');
    expect(matchRoute(USER_ROUTES, 'GET', '/api/ai/jobs/a%20b')?.pathParameters).toEqual({ jobId: 'a b' });
  });

  it('returns null for an unknown path, a wrong method or an empty parameter', () => {
    expect(matchRoute(USER_ROUTES, 'GET', '/api/ai/nothing')).toBeNull();
    expect(matchRoute(USER_ROUTES, 'DELETE', '/api/ai/jobs')).toBeNull();
    expect(matchRoute(USER_ROUTES, 'GET', '/api/ai/jobs/')).toBeNull();
    expect(matchRoute(ADMIN_ROUTES, 'GET', '/api/ai/jobs')).toBeNull();
  });
});

describe('cursors', () => {
  it('round trip a position (creation time to the millisecond, id) and refuse anything else', () => {
    const position = { createdAt: new Date('2026-12-02T10:11:12.345Z'), id: newId() };
    const cursor = encodeCursor(position);
    expect(cursor.length).toBeLessThanOrEqual(64);
    expect(decodeCursor(cursor)).toEqual(position);
    expect(decodeCursor(position.id)).toBeNull();
    expect(decodeCursor('!!')).toBeNull();
    // A v1 cursor (the id alone, from when lists were ordered by id) is not accepted any more.
    expect(decodeCursor(Buffer.from(`v1:${position.id}`).toString('base64url'))).toBeNull();
    expect(decodeCursor(Buffer.from(`v2:12x:${position.id}`).toString('base64url'))).toBeNull();
    expect(decodeCursor(Buffer.from(`v2:1:not-an-id`).toString('base64url'))).toBeNull();
  });
});
