/**
 * The Budgets page: spend against the caps as bars (the platform's and each job type's day, a looked-up user's day
 * and month), a model in cooldown and until when, each model's minute window; and a user's cap changed through the
 * form, after confirmation, takes effect at once: a create over the new cap is refused 429 SPEND_LIMIT_REACHED.
 * Spend and the cooldown are seeded in the database (the mock provider is free, and a real 429 cooldown ends
 * within the mock's minute); the cooldown is on deepseek/deepseek-chat, which no local job calls without a key.
 */
import { loadOrCreateLocalJwtKey, signLocalToken } from '../../lib/api/local-jwt.ts';
import { DEFAULT_JWT_KEY_FILE, LOCAL_TOKEN_AUDIENCE } from '../../lib/dev/local-runtime/local-auth.ts';
import { expect, one, screenshot, signIn, test } from './fixtures.ts';

const USER = 'budget-user';

test.afterAll(async ({ db }) => {
  await db.query("DELETE FROM SpendCounter WHERE (scope = 'platform_day' AND subject = '*') OR (scope = 'job_type_day' AND subject = 'quiz_generation') OR subject = ?", [USER]);
  await db.query("DELETE FROM SpendCap WHERE subject = ?", [USER]);
  await db.query("UPDATE ProviderLimit SET cooldownUntil = NULL, rateFactor = 1000 WHERE provider = 'deepseek'");
});

async function createAs(baseUrl: string, token: string): Promise<Response> {
  return fetch(`${baseUrl}/api/ai/feynman-evaluations`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ concept: 'Budgets', explanation: 'Caps stop spending.' }),
  });
}

test("shows spend against caps and a cooldown; a user's cap changed after confirmation takes effect at once", async ({ page, baseUrl, db }) => {
  const spent = (scope: string, subject: string, usd: string) => db.query(
    `INSERT INTO SpendCounter (scope, subject, periodStart, reservedUsd, settledUsd) VALUES (?, ?, UTC_DATE(), 0, ?)
     ON DUPLICATE KEY UPDATE settledUsd = settledUsd + VALUES(settledUsd)`, [scope, subject, usd]);
  await spent('platform_day', '*', '25.5');
  await spent('job_type_day', 'quiz_generation', '1.25');
  await spent('user_day', USER, '0.5');
  await db.query(`INSERT INTO ProviderLimit (provider, model, rpm, tpm, maxInFlight, source, updatedAt, cooldownUntil, rateFactor)
    VALUES ('deepseek', 'deepseek-chat', 300, 3000000, 40, 'config', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 10 MINUTE, 500)
    ON DUPLICATE KEY UPDATE cooldownUntil = VALUES(cooldownUntil), rateFactor = 500`);
  const platform = await one(db, "SELECT CAST(settledUsd + reservedUsd AS CHAR) AS used FROM SpendCounter WHERE scope = 'platform_day' AND subject = '*' AND periodStart = UTC_DATE()");

  await signIn(page);
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Budgets', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Budgets' })).toBeFocused();

  const today = page.getByRole('table', { name: 'Spend today against the caps (UTC day)' });
  const platformRow = today.locator('tr[data-scope="platform_day"]');
  await expect(platformRow.locator('td[data-col="used"]')).toHaveAttribute('data-usd', platform?.used);
  await expect(platformRow.locator('td[data-col="cap"]')).toHaveAttribute('data-usd', '100.00000000');
  const bar = page.getByRole('meter', { name: /^Platform: \$25\.50 of \$100\.00/ });
  await expect(bar).toHaveAttribute('value', String(Number(platform?.used)));
  await expect(bar).toHaveAttribute('max', '100');
  await expect(today.locator('tr[data-subject="quiz_generation"] td[data-col="used"]')).toHaveAttribute('data-usd', '1.25000000');

  await expect(page.getByTestId('cooldowns')).toContainText('deepseek/deepseek-chat in cooldown until');
  const cooling = page.getByTestId('models').locator('tr[data-model="deepseek/deepseek-chat"]');
  await expect(cooling.locator('td[data-col="cooldown"]')).toContainText(/until .*, admitting 50%/);
  await expect(page.getByRole('meter', { name: 'mock/mock-chat requests' })).toBeVisible();

  await page.getByLabel('User id').fill(USER);
  await page.getByRole('button', { name: 'Look up' }).click();
  await expect(page).toHaveURL(new RegExp(`/console/budgets\\?user=${USER}$`));
  const userTable = page.getByTestId('user-spend');
  const todayRow = userTable.locator('tr[data-scope="user_day"]');
  await expect(todayRow.locator('td[data-col="cap"]')).toHaveAttribute('data-usd', '2.00000000');
  await expect(page.getByRole('meter', { name: 'Today: $0.50 of $2.00' })).toBeVisible();
  await screenshot(page, 'budgets');

  // Asked first; cancelling changes nothing.
  await page.getByLabel('Period').selectOption('user_day');
  await page.getByLabel('New cap (USD)').fill('0.25');
  await page.getByRole('button', { name: 'Change cap' }).click();
  const dialog = page.getByRole('dialog', { name: 'Change cap' });
  await expect(dialog).toContainText(`Set ${USER}'s daily cap to $0.25?`);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toBeHidden();
  expect(await one(db, 'SELECT COUNT(*) AS n FROM SpendCap WHERE subject = ?', [USER])).toMatchObject({ n: 0 });

  await page.getByRole('button', { name: 'Change cap' }).click();
  await dialog.getByRole('button', { name: 'Change cap' }).click();
  await expect(page.getByTestId('cap-result')).toHaveText(`${USER}'s daily cap is now $0.25.`);
  await expect(todayRow.locator('td[data-col="cap"]')).toHaveAttribute('data-usd', '0.25000000');
  await expect(todayRow.locator('td[data-col="used"]')).toContainText('(reached)');
  await screenshot(page, 'budgets-cap-changed');

  const token = await signLocalToken(await loadOrCreateLocalJwtKey(DEFAULT_JWT_KEY_FILE), { sub: USER, admin: false, ...LOCAL_TOKEN_AUDIENCE });
  const refused = await createAs(baseUrl, token);
  expect(refused.status).toBe(429);
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('SPEND_LIMIT_REACHED');
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

  // Back to the default ($2): admitted again.
  await page.getByRole('button', { name: 'Reset to default' }).click();
  await page.getByRole('dialog', { name: 'Reset to default' }).getByRole('button', { name: 'Reset to default' }).click();
  await expect(todayRow.locator('td[data-col="cap"]')).toHaveAttribute('data-usd', '2.00000000');
  expect((await createAs(baseUrl, token)).status).toBe(202);
});
