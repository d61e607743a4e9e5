/**
 * Admin is exact: a table of claim shapes → admin or not, through `callerOf` (the function both Lambdas use),
 * for the default policy (`cognito:groups` holds `SUPER_ADMIN`) and a per-stage one (`roles` holds `ops-admin`).
 * API Gateway HTTP API forwards an array claim as its elements joined by single spaces in brackets, so for an
 * issuer whose group names may contain spaces only the one-element form `[SUPER_ADMIN]` is unambiguous; every
 * near-miss below must be refused. Where the stage's issuer is a Cognito user pool (group names without
 * whitespace), the flattened list splits on spaces: an admin in several groups is an admin, through the
 * handler too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAdminApiHandler } from '../../lib/api/admin-api.ts';
import { adminPolicyFromEnv, callerOf, claimGrantsGroup, isCognitoUserPoolIssuer, type AdminPolicy } from '../../lib/api/auth.ts';
import { ConfigurationError } from '../../lib/config/aws.ts';
import { apiEvent, invoke, userClaims } from '../helpers/api-events.ts';

const DEFAULT: AdminPolicy = { claim: 'cognito:groups', group: 'SUPER_ADMIN' };
const caller = (claims: Record<string, unknown>, policy = DEFAULT) =>
  callerOf({ requestContext: { authorizer: { jwt: { claims: { sub: 'u-1', ...claims }, scopes: null } } } } as never, policy);

const G = 'cognito:groups';
const SHAPES: readonly [string, Record<string, unknown>, boolean][] = [
  ['a real array holding it', { [G]: ['teachers', 'SUPER_ADMIN'] }, true],
  ['a real one-element array', { [G]: ['SUPER_ADMIN'] }, true],
  ['the flattened one-element array', { [G]: '[SUPER_ADMIN]' }, true],
  ['a single-valued string claim', { [G]: 'SUPER_ADMIN' }, true],
  // Flattened forms: more than one element may be one group containing the separator → ambiguous → refused.
  ['flattened, two elements (could be the group "teachers SUPER_ADMIN")', { [G]: '[teachers SUPER_ADMIN]' }, false],
  ['flattened, admin first of two', { [G]: '[SUPER_ADMIN teachers]' }, false],
  ['flattened, a group with a space', { [G]: '[not SUPER_ADMIN]' }, false],
  ['flattened, padded', { [G]: '[ SUPER_ADMIN ]' }, false],
  ['flattened, nested brackets', { [G]: '[[SUPER_ADMIN]]' }, false],
  ['flattened, a different group', { [G]: '[NOT_SUPER_ADMIN]' }, false],
  ['flattened, empty', { [G]: '[]' }, false],
  // The near-misses of the issue: display names and roles that merely mention the group.
  ['a display name "team, SUPER_ADMIN"', { [G]: 'team, SUPER_ADMIN' }, false],
  ['a role "not SUPER_ADMIN"', { [G]: 'not SUPER_ADMIN' }, false],
  ['an array element "team, SUPER_ADMIN"', { [G]: ['team, SUPER_ADMIN'] }, false],
  ['an array element "not SUPER_ADMIN"', { [G]: ['not SUPER_ADMIN'] }, false],
  ['a comma list', { [G]: 'staff,SUPER_ADMIN' }, false],
  ['a space list', { [G]: 'staff SUPER_ADMIN' }, false],
  ['JSON array text', { [G]: '["SUPER_ADMIN"]' }, false],
  ['JSON array text of two', { [G]: '["staff","SUPER_ADMIN"]' }, false],
  ['surrounding whitespace', { [G]: ' SUPER_ADMIN' }, false],
  ['a trailing newline', { [G]: 'SUPER_ADMIN\n' }, false],
  ['an array element with whitespace', { [G]: [' SUPER_ADMIN'] }, false],
  // Case and look-alikes: byte for byte.
  ['lower case', { [G]: 'super_admin' }, false],
  ['mixed case in an array', { [G]: ['Super_Admin'] }, false],
  ['a Cyrillic look-alike', { [G]: ['SUPER_АDMIN'] }, false],
  ['a zero-width joiner', { [G]: ['SUPER_\u200dADMIN'] }, false],
  // Objects and nesting.
  ['an object', { [G]: { SUPER_ADMIN: true } }, false],
  ['object text', { [G]: '{"SUPER_ADMIN":true}' }, false],
  ['a nested array', { [G]: [['SUPER_ADMIN']] }, false],
  ['an array of objects', { [G]: [{ name: 'SUPER_ADMIN' }] }, false],
  ['a number', { [G]: 1 }, false],
  ['true', { [G]: true }, false],
  ['null', { [G]: null }, false],
  // The group in any other claim.
  ['roles (not the configured claim)', { roles: '[SUPER_ADMIN]' }, false],
  ['groups', { groups: ['SUPER_ADMIN'] }, false],
  ['scope', { scope: 'SUPER_ADMIN' }, false],
  ['custom:role', { 'custom:role': 'SUPER_ADMIN' }, false],
  ['a claim name differing in case', { 'Cognito:Groups': '[SUPER_ADMIN]' }, false],
  ['no claim at all', {}, false],
];

describe('admin claim shapes, default policy (cognito:groups holds SUPER_ADMIN)', () => {
  it.each(SHAPES)('%s → admin %s', (_, claims, admin) => {
    expect(caller(claims).isAdmin).toBe(admin);
  });

  it('a claim named __proto__ cannot stand in for the configured claim', () => {
    const claims = JSON.parse('{"__proto__":{"cognito:groups":"SUPER_ADMIN"}}') as Record<string, unknown>;
    expect(caller(claims).isAdmin).toBe(false);
  });
});

describe('a per-stage policy (roles holds ops-admin)', () => {
  const policy: AdminPolicy = { claim: 'roles', group: 'ops-admin' };
  it.each([
    [{ roles: '[ops-admin]' }, true],
    [{ roles: ['x', 'ops-admin'] }, true],
    [{ roles: '[SUPER_ADMIN]' }, false],
    [{ 'cognito:groups': '[ops-admin]' }, false],
    [{ roles: '[x ops-admin]' }, false],
  ])('%j → admin %s', (claims, admin) => {
    expect(caller(claims, policy).isAdmin).toBe(admin);
  });

  it('is read from ADMIN_CLAIM / ADMIN_GROUP, with the defaults when unset', () => {
    expect(adminPolicyFromEnv({})).toEqual(DEFAULT);
    expect(adminPolicyFromEnv({ ADMIN_CLAIM: 'roles', ADMIN_GROUP: 'ops-admin' })).toEqual(policy);
  });

  it('refuses to configure a group whose flattened form would be ambiguous', () => {
    for (const group of ['SUPER ADMIN', '[x]', 'a\tb']) {
      expect(() => adminPolicyFromEnv({ ADMIN_GROUP: group })).toThrow(ConfigurationError);
      expect(claimGrantsGroup(`[${group}]`, group)).toBe(false);
    }
  });
});

const POOL = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123xyz';
const COGNITO: AdminPolicy = { ...DEFAULT, cognitoIssuer: POOL };

describe('a stage whose issuer is a Cognito user pool (group names cannot contain whitespace)', () => {
  const fromPool = (groups: unknown, iss: unknown = POOL) => caller({ iss, [G]: groups }, COGNITO).isAdmin;

  it.each([
    ['[teachers SUPER_ADMIN]', true],
    ['[SUPER_ADMIN teachers]', true],
    ['[a b SUPER_ADMIN c]', true],
    ['[SUPER_ADMIN]', true],
    ['[[x] SUPER_ADMIN]', true], // brackets are punctuation, allowed in a Cognito group name
    ['[teachers NOT_SUPER_ADMIN]', false],
    ['[teachers super_admin]', false],
    ['[teachers SUPER_ADMIN_X]', false],
    ['[teachers [SUPER_ADMIN]]', false],
    ['[teachers,SUPER_ADMIN]', false],
    ['teachers SUPER_ADMIN', false], // not the flattened form: no brackets
    ['[teachers SUPER_ADMIN', false],
    ['[]', false],
    ['["teachers","SUPER_ADMIN"]', false],
  ])('%s → admin %s', (value, admin) => {
    expect(fromPool(value)).toBe(admin);
  });

  it('keeps the strict rule for a token of another issuer (the local runtime also trusts its own)', () => {
    expect(fromPool('[teachers SUPER_ADMIN]', 'ai-jobs-local')).toBe(false);
    expect(fromPool('[teachers SUPER_ADMIN]', `${POOL}/`)).toBe(false);
    expect(caller({ [G]: '[teachers SUPER_ADMIN]' }, COGNITO).isAdmin).toBe(false); // no iss
    expect(fromPool('[SUPER_ADMIN]', 'ai-jobs-local')).toBe(true);
  });

  it('is chosen by JWT_ISSUER: a user pool URL splits, any other issuer keeps the strict rule', () => {
    expect(adminPolicyFromEnv({ JWT_ISSUER: POOL })).toEqual(COGNITO);
    for (const issuer of ['https://login.example.org/', 'https://cognito-idp.eu-west-1.amazonaws.com/', 'http://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Abc',
      'https://cognito-idp.eu-west-1.amazonaws.com/us-east-1_Abc', 'https://cognito-idp.eu-west-1.amazonaws.com.evil.example/eu-west-1_Abc', `${POOL}/`]) {
      expect(isCognitoUserPoolIssuer(issuer), issuer).toBe(false);
      expect(adminPolicyFromEnv({ JWT_ISSUER: issuer })).toEqual(DEFAULT);
    }
    expect(isCognitoUserPoolIssuer('https://cognito-idp.cn-north-1.amazonaws.com.cn/cn-north-1_Abc')).toBe(true);
  });
});

describe('the admin API with a Cognito issuer (the handler, as API Gateway invokes it)', () => {
  const saved = process.env.JWT_ISSUER;
  afterEach(() => {
    if (saved === undefined) delete process.env.JWT_ISSUER;
    else process.env.JWT_ISSUER = saved;
  });
  const reaperReport = (claims: Record<string, string>) =>
    invoke(createAdminApiHandler(), apiEvent('GET /admin-api/ai/reaper/report', { claims: userClaims('admin-7', claims) }));

  it('opens to an admin in several groups from the user pool, and stays closed to the same claim from another issuer', async () => {
    process.env.JWT_ISSUER = POOL;
    expect((await reaperReport({ iss: POOL, [G]: '[teachers SUPER_ADMIN]' })).status).toBe(200);
    expect((await reaperReport({ iss: 'https://login.example.org/', [G]: '[teachers SUPER_ADMIN]' })).status).toBe(403);
    expect((await reaperReport({ iss: POOL, [G]: '[teachers staff]' })).status).toBe(403);
    process.env.JWT_ISSUER = 'https://login.example.org/';
    expect((await reaperReport({ iss: 'https://login.example.org/', [G]: '[teachers SUPER_ADMIN]' })).status).toBe(403);
  });
});
