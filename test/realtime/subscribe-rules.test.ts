/**
 * The subscribe rules the deployed onSubscribe handler and the local hub share: the owner segment the handler
 * computes in APPSYNC_JS-safe code equals the publisher's (node:crypto) and the client's (WebCrypto) for any
 * subject; the admin rule equals the API's; the audience rule is API Gateway's; and the channel table holds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimGrantsGroup } from '../../lib/api/auth.ts';
import { channelSegments, jobChannel, ownerSegmentOf } from '../../lib/realtime/channel.ts';
import { ownerSegmentOfSubjectSync, utf8Base64 } from '../../lib/realtime/server-channel.ts';
import { audienceAccepted, authorizeJobSubscription, claimsGrantAdmin, ownerSegmentOfBase64 } from '../../lib/realtime/subscribe-rules.ts';
import { bytesOfBase64 } from '../../lib/realtime/appsync-sha256.ts';
import { newJobId } from './realtime-fixture.ts';

const POLICY = { adminClaim: 'cognito:groups', adminGroup: 'SUPER_ADMIN', audiences: ['api-a', 'api-b'] };
const identity = (sub: string, claims: Record<string, unknown> = {}) => ({ sub, claims: { sub, aud: 'api-a', ...claims } });
const segmentsOf = (channel: string) => channelSegments(channel, { wildcard: true });

describe('owner segment', () => {
  it('is the same in the handler (APPSYNC_JS SHA-256), the publisher (node:crypto) and the client (WebCrypto)', async () => {
    await fc.assert(fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 64 }), async (sub) => {
      const handler = ownerSegmentOfBase64(utf8Base64(sub));
      expect(handler).toBe(ownerSegmentOfSubjectSync(sub));
      expect(handler).toBe(await ownerSegmentOf(sub));
    }), { numRuns: 300 });
  });

  it('hashes the block boundaries right (55, 56, 63, 64, 119, 120 bytes)', () => {
    for (const n of [0, 1, 55, 56, 63, 64, 119, 120, 500]) expect(ownerSegmentOfBase64(utf8Base64('x'.repeat(n)))).toBe(ownerSegmentOfSubjectSync('x'.repeat(n)));
  });

  it('decodes base64 exactly, padded or not', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
      const b64 = Buffer.from(bytes).toString('base64');
      expect(bytesOfBase64(b64)).toEqual([...bytes]);
      expect(bytesOfBase64(b64.replace(/=+$/, ''))).toEqual([...bytes]);
    }));
  });

  it('is a valid channel segment for any subject, e.g. auth0|123 and an e-mail', () => {
    for (const sub of ['auth0|123', 'a.b+c@example.org', 'google-oauth2|1098', 'ü']) expect(() => jobChannel(ownerSegmentOfSubjectSync(sub), newJobId())).not.toThrow();
  });
});

describe('admin and audience', () => {
  it('grants admin exactly when the API would (lib/api/auth.ts claimGrantsGroup)', () => {
    const value = fc.oneof(fc.constantFrom('SUPER_ADMIN', '[SUPER_ADMIN]', 'super_admin', '[a SUPER_ADMIN]', ''), fc.string(),
      fc.array(fc.oneof(fc.constant('SUPER_ADMIN'), fc.string())), fc.integer(), fc.constant(null));
    fc.assert(fc.property(value, (v) => {
      expect(claimsGrantAdmin({ 'cognito:groups': v }, POLICY)).toBe(claimGrantsGroup(v, 'SUPER_ADMIN'));
    }));
  });

  it('reads own claims only: an inherited one grants nothing', () => {
    expect(claimsGrantAdmin(Object.create({ 'cognito:groups': ['SUPER_ADMIN'] }) as Record<string, unknown>, POLICY)).toBe(false);
    expect(claimsGrantAdmin({}, { ...POLICY, adminClaim: 'constructor' })).toBe(false);
  });

  it.each([
    ['aud names an audience', { aud: 'api-b' }, true],
    ['aud lists one', { aud: ['x', 'api-a'] }, true],
    ['aud names another', { aud: 'api-c' }, false],
    ['aud lists none', { aud: ['x'] }, false],
    ['no aud, client_id names one', { client_id: 'api-a' }, true],
    ['no aud, client_id names another', { client_id: 'x' }, false],
    ['neither', {}, false],
    ['aud wins over client_id', { aud: 'x', client_id: 'api-a' }, false],
  ])('checks the audience as API Gateway does: %s', (_, claims, accepted) => {
    expect(audienceAccepted(claims, POLICY.audiences)).toBe(accepted);
  });
});

describe('authorizeJobSubscription', () => {
  const job = newJobId();
  const alice = ownerSegmentOfSubjectSync('alice');
  const bob = ownerSegmentOfSubjectSync('bob');
  const rule = (channel: string, who: unknown) =>
    authorizeJobSubscription(segmentsOf(channel), who, POLICY, utf8Base64(String((who as { sub?: unknown } | null)?.sub ?? '')));

  it.each([
    ['own job', `/jobs/${alice}/${job}`, identity('alice'), 'allow'],
    ['own jobs, wildcard', `/jobs/${alice}/*`, identity('alice'), 'allow'],
    ["another user's job", `/jobs/${bob}/${job}`, identity('alice'), 'not-owner'],
    ["another user's jobs, wildcard", `/jobs/${bob}/*`, identity('alice'), 'not-owner'],
    ["an admin, another user's job", `/jobs/${bob}/${job}`, identity('root', { 'cognito:groups': ['SUPER_ADMIN'] }), 'allow'],
    ['an admin, the firehose', '/jobs/*', identity('root', { 'cognito:groups': ['SUPER_ADMIN'] }), 'channel'],
    ['no identity', `/jobs/${alice}/${job}`, null, 'unauthenticated'],
    ['no sub', `/jobs/${alice}/${job}`, { claims: {} }, 'unauthenticated'],
    ['a sub longer than 64', `/jobs/${alice}/${job}`, identity('a'.repeat(65)), 'unauthenticated'],
    ['a padded sub', `/jobs/${alice}/${job}`, identity(' alice'), 'unauthenticated'],
    ['another audience', `/jobs/${alice}/${job}`, identity('alice', { aud: 'x' }), 'audience'],
    ['a lower-case job id', `/jobs/${alice}/${job.toLowerCase()}`, identity('alice'), 'channel'],
    ['an upper-case owner segment', `/jobs/${alice.toUpperCase()}/${job}`, identity('alice'), 'channel'],
    ['two segments', `/jobs/${alice}`, identity('alice'), 'channel'],
  ])('%s → %s', (_, channel, who, verdict) => {
    expect(rule(channel, who)).toBe(verdict);
  });

  it('refuses a malformed segment list without throwing', () => {
    for (const segments of [undefined, null, 'jobs', [], ['jobs', 1, 2], ['jobs', alice, job, 'x']]) {
      expect(authorizeJobSubscription(segments, identity('alice'), POLICY, utf8Base64('alice'))).toBe('channel');
    }
  });
});

describe('channelSegments (AppSync channel syntax)', () => {
  it.each([
    ['/jobs/a/b', ['jobs', 'a', 'b']],
    ['jobs/a-1/B2', ['jobs', 'a-1', 'B2']],
    ['/jobs/a/*', ['jobs', 'a', '*']],
    ['/a/b/c/d/e', ['a', 'b', 'c', 'd', 'e']],
  ])('accepts %s', (path, segments) => expect(segmentsOf(path)).toEqual(segments));

  it.each(['', '/', '/a/b/c/d/e/f', '/jobs/-a', '/jobs/a-', '/jobs/a_b', `/jobs/${'a'.repeat(51)}`, '/jobs//b', '/*', '/jobs/*/x', '/jobs/a/'])(
    'refuses %j', (path) => expect(segmentsOf(path)).toBeUndefined());

  it('refuses a wildcard where a publish names a channel', () => {
    expect(channelSegments('/jobs/a/*', { wildcard: false })).toBeUndefined();
  });
});
