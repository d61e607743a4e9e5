/**
 * The authorization matrix at the handler level: for every route of both tables, no claims → 401; for user
 * routes on a job, another user → 404 (never 403); for admin routes, a non-admin → 403 and an admin in an
 * accepted claim form → allowed.
 */
import { setUpApiEnvironment } from './api-env.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as adminHandler } from '../../functions/api-admin.ts';
import { handler as userHandler } from '../../functions/api-user.ts';
import { ADMIN_ROUTES, USER_ROUTES, routeKeyOf } from '../../lib/api/routes.ts';
import { insertJob } from '../helpers/factories.ts';
import { adminClaims, apiEvent, invoke, userClaims, type Claims } from '../helpers/api-events.ts';

beforeAll(async () => {
  await setUpApiEnvironment();
});

const JOB_ROUTES = USER_ROUTES.filter((r) => r.path.includes('{jobId}'));

describe('user routes', () => {
  it.each(USER_ROUTES.map(routeKeyOf))('%s without claims → 401 UNAUTHORIZED', async (routeKey) => {
    const job = await insertJob();
    const res = await invoke(userHandler, apiEvent(routeKey, { claims: null, pathParameters: { jobId: job.id }, body: {} }));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message: 'Authentication required' } });
  });

  it.each([
    ['no sub', { iss: 'x' }],
    ['an empty sub', { sub: '' }],
    ['a sub too long to own jobs', { sub: 'u'.repeat(65) }],
    ['a sub with a trailing space (MySQL would equate it with the trimmed one)', { sub: 'owner ' }],
    ['a sub with a leading tab', { sub: '\towner' }],
    ['a sub with a control character', { sub: 'own\u0000er' }],
  ])('claims with %s → 401', async (_, claims) => {
    const res = await invoke(userHandler, apiEvent('GET /api/ai/jobs', { claims }));
    expect(res.status).toBe(401);
  });

  it.each(JOB_ROUTES.map(routeKeyOf))('%s on another user\'s job → 404 JOB_NOT_FOUND, the owner is not refused', async (routeKey) => {
    const route = JOB_ROUTES.find((r) => routeKeyOf(r) === routeKey)!;
    const job = await insertJob({ userId: 'owner', jobType: 'jobType' in route ? route.jobType : 'synthetic_job', lifecycleStatus: 'running' });
    const other = await invoke(userHandler, apiEvent(routeKey, { claims: userClaims('intruder'), pathParameters: { jobId: job.id } }));
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('JOB_NOT_FOUND');
    const owner = await invoke(userHandler, apiEvent(routeKey, { claims: userClaims('owner'), pathParameters: { jobId: job.id } }));
    expect([200, 202, 409]).toContain(owner.status);
  });

  it('an admin on a user route is just a user: another user\'s job is still 404', async () => {
    const job = await insertJob({ userId: 'owner' });
    const res = await invoke(userHandler, apiEvent('GET /api/ai/jobs/{jobId}', {
      claims: adminClaims('admin-1'), pathParameters: { jobId: job.id },
    }));
    expect(res.status).toBe(404);
  });

  it('a route key this function does not serve → 404 ROUTE_NOT_FOUND', async () => {
    const res = await invoke(userHandler, apiEvent('GET /admin-api/ai/stats'));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
  });
});

describe('admin routes', () => {
  const adminEvent = (routeKey: string, claims: Claims | null, jobId: string) =>
    apiEvent(routeKey, { claims, pathParameters: routeKey.includes('{jobId}') ? { jobId } : undefined });

  it.each(ADMIN_ROUTES.map(routeKeyOf))('%s: no claims → 401, a plain user → 403 FORBIDDEN', async (routeKey) => {
    const job = await insertJob({ lifecycleStatus: 'succeeded' });
    expect((await invoke(adminHandler, adminEvent(routeKey, null, job.id))).status).toBe(401);
    const res = await invoke(adminHandler, adminEvent(routeKey, userClaims('user-1', { roles: '[USER]', groups: 'staff,support' }), job.id));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it.each([
    ['cognito:groups, API Gateway form of a one-element array', { 'cognito:groups': '[SUPER_ADMIN]' }],
    ['cognito:groups, single value', { 'cognito:groups': 'SUPER_ADMIN' }],
  ])('accepts SUPER_ADMIN in %s (the whole table of shapes: admin-claims.test.ts)', async (_, extra) => {
    const res = await invoke(adminHandler, apiEvent('GET /admin-api/ai/jobs', { claims: userClaims('admin-1', extra) }));
    expect(res.status).toBe(200);
  });

  it('does not accept a role that merely contains SUPER_ADMIN', async () => {
    const res = await invoke(adminHandler, apiEvent('GET /admin-api/ai/jobs', { claims: userClaims('u', { roles: '[NOT_SUPER_ADMIN]' }) }));
    expect(res.status).toBe(403);
  });

  it('a user route key sent to the admin function → 404 ROUTE_NOT_FOUND', async () => {
    const res = await invoke(adminHandler, apiEvent('GET /api/ai/jobs', { claims: adminClaims('admin-1') }));
    expect(res.status).toBe(404);
  });
});
