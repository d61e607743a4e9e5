/**
 * The deployed sign-in, end to end against a real OIDC issuer on loopback: `oidc-provider` (the certified
 * Node implementation) with a public client requiring PKCE, and a second local runtime told to trust that
 * issuer (LOCAL_OIDC_ISSUER, lib/dev only; on a stage API Gateway's JWT authorizer verifies tokens). The
 * console signs in through the issuer's pages in a pop-up, keeps the tokens in memory only, and the admin API
 * accepts the access token (JWT, audience `urn:ai-jobs:api`, `cognito:groups` = SUPER_ADMIN as a Cognito pool would put it).
 */
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import Provider from 'oidc-provider';
import { startRuntime, type StartedRuntime } from './runtime.ts';
import { expect, screenshot, test } from './fixtures.ts';

const CLIENT_ID = 'ai-jobs-console';
const AUDIENCE = 'urn:ai-jobs:api';

/** A free loopback port (the runtime's, so the client's redirect URI can name it before it starts). */
async function freePort(): Promise<number> {
  const server = http.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startIssuer(consolePort: number): Promise<{ issuer: string; close(): Promise<void> }> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID, token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'],
      redirect_uris: [`http://127.0.0.1:${consolePort}/console/`],
    }],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: 'openid', audience: AUDIENCE, accessTokenFormat: 'jwt', accessTokenTTL: 3600 }),
      },
    },
    // Only this account is in the admin group, as a Cognito pool's groups would have it.
    extraTokenClaims: (_ctx, token) => ('accountId' in token && token.accountId === 'oidc-admin' ? { 'cognito:groups': ['SUPER_ADMIN'] } : {}),
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, IdToken: 3600, AuthorizationCode: 60 },
    clientBasedCORS: () => true,
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  });
  server.on('request', provider.callback());
  return { issuer, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let issuer: Awaited<ReturnType<typeof startIssuer>>;
let runtime: StartedRuntime;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  const port = await freePort();
  issuer = await startIssuer(port);
  runtime = await startRuntime(`aijobs_browser_oidc_${process.pid}`, {
    PORT: String(port), LOCAL_OIDC_ISSUER: issuer.issuer, LOCAL_OIDC_CLIENT_ID: CLIENT_ID, LOCAL_OIDC_AUDIENCE: AUDIENCE,
  });
});

test.afterAll(async () => {
  await runtime?.stop();
  await issuer?.close();
});

test('signs in through the issuer (authorization code + PKCE in a pop-up), keeps tokens in memory, and the admin API accepts them', async ({ page }) => {
  const requests: string[] = [];
  page.context().on('request', (r) => requests.push(r.url()));
  await page.goto(`${runtime.url}/console/`);
  await expect(page.getByText(`Sign in with your organisation's account at ${new URL(issuer.issuer).host}`)).toBeVisible();
  await screenshot(page, 'sign-in-oidc');
  const popupOpened = page.waitForEvent('popup');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const popup = await popupOpened;
  await popup.locator('input[name="login"]').fill('oidc-admin');
  await popup.locator('input[name="password"]').fill('any password');
  await popup.getByRole('button', { name: 'Sign-in' }).click();
  await popup.getByRole('button', { name: 'Continue' }).click();
  await expect.poll(() => popup.isClosed()).toBe(true);

  await expect(page.getByText('Signed in as oidc-admin')).toBeVisible();
  // The admin API took the issuer's token: the overview's stats loaded.
  await expect(page.getByTestId('jobs-by-state')).toBeVisible();
  const authorize = new URL(requests.find((u) => u.startsWith(`${issuer.issuer}/auth?`)) ?? 'http://x/');
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorize.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
  expect(await page.evaluate(() => [Object.keys(localStorage).length, Object.keys(sessionStorage).length, document.cookie])).toEqual([0, 0, '']);
  await page.reload();
  await expect(page.getByRole('button', { name: 'Sign in', exact: true })).toBeVisible();
});

/** Signs in through the pop-up as `login`. */
async function signInAs(page: import('@playwright/test').Page, login: string): Promise<void> {
  await page.goto(`${runtime.url}/console/`);
  const popupOpened = page.waitForEvent('popup');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const popup = await popupOpened;
  await popup.locator('input[name="login"]').fill(login);
  await popup.locator('input[name="password"]').fill('any password');
  await popup.getByRole('button', { name: 'Sign-in' }).click();
  await popup.getByRole('button', { name: 'Continue' }).click();
  await expect.poll(() => popup.isClosed()).toBe(true);
}

test('a signed-in user outside the admin group gets no admin data (403 from the admin API)', async ({ page }) => {
  await signInAs(page, 'just-a-user');
  await expect(page.getByText('Signed in as just-a-user')).toBeVisible();
  await expect(page.getByText(/Could not load/).first()).toBeVisible();
  await expect(page.getByTestId('jobs-by-state')).toHaveCount(0);
});

test('"Cancel sign-in" stops waiting for the pop-up and says so', async ({ page }) => {
  await page.goto(`${runtime.url}/console/`);
  const popupOpened = page.waitForEvent('popup');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const popup = await popupOpened;
  await popup.locator('input[name="login"]').waitFor();
  await page.getByRole('button', { name: 'Cancel sign-in' }).click();
  await expect(page.getByRole('alert')).toContainText('sign-in was cancelled');
  await expect.poll(() => popup.isClosed()).toBe(true);
  await expect(page.getByRole('button', { name: 'Sign in', exact: true })).toBeEnabled();
});
