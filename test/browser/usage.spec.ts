/** The Usage page: charts with their totals as text, checked against the usage ledger; the range lives in the URL. */
import { createQuiz, expect, one, screenshot, signIn, test, waitForQuiet } from './fixtures.ts';

test('the usage totals next to the charts equal the ledger, per model too, and the range is a bookmarkable URL', async ({ page, baseUrl, adminToken, db }) => {
  await createQuiz(baseUrl, adminToken, 'The heart pumps blood through the body.');
  await createQuiz(baseUrl, adminToken, 'Plants release oxygen during photosynthesis.');
  await waitForQuiet(db);
  const today = (await one(db, 'SELECT DATE_FORMAT(UTC_DATE(), \'%Y-%m-%d\') AS d'))?.d as string;
  const ledger = await one(db, `SELECT COUNT(*) AS calls, CAST(SUM(promptTokens) AS CHAR) AS p, CAST(SUM(completionTokens) AS CHAR) AS c,
    CAST(SUM(totalTokens) AS CHAR) AS t, CAST(SUM(costUsd) AS CHAR) AS usd FROM AiUsageLog WHERE createdAt >= UTC_DATE()`);
  expect(Number(ledger?.calls)).toBeGreaterThan(0);

  await signIn(page);
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Usage', exact: true }).click();
  await page.getByLabel('From (UTC day)').fill(today);
  await page.getByLabel('To (UTC day, inclusive)').fill(today);
  await page.getByRole('button', { name: 'Show range' }).click();
  await expect(page).toHaveURL(new RegExp(`/console/usage\\?from=${today}&to=${today}$`));

  const totals = page.getByTestId('usage-totals');
  const n = (v: unknown) => Number(v).toLocaleString('en-US');
  await expect(totals).toContainText(`(${ledger?.usd} USD)`);
  await expect(totals.locator('[data-total="tokens"]')).toHaveText(n(ledger?.t));
  await expect(totals.locator('[data-total="prompt"]')).toHaveText(n(ledger?.p));
  await expect(totals.locator('[data-total="completion"]')).toHaveText(n(ledger?.c));
  await expect(totals.locator('[data-total="calls"]')).toHaveText(n(ledger?.calls));
  for (const chart of ['cost-chart', 'tokens-chart', 'model-chart']) await expect(page.getByTestId(chart).locator('canvas')).toBeVisible();

  const [byModel] = await db.query(`SELECT CONCAT(provider, '/', model) AS m, CAST(SUM(totalTokens) AS CHAR) AS t, CAST(SUM(costUsd) AS CHAR) AS usd
    FROM AiUsageLog WHERE createdAt >= UTC_DATE() GROUP BY provider, model`);
  const modelTable = page.getByRole('table', { name: 'By model' });
  await expect(modelTable.locator('tbody tr')).toHaveCount((byModel as unknown[]).length);
  for (const { m, t, usd } of byModel as { m: string; t: string; usd: string }[]) {
    await expect(modelTable.locator(`tr[data-key="${m}"] td[data-col="tokens"]`)).toHaveText(n(t));
    await expect(modelTable.locator(`tr[data-key="${m}"] td[data-col="cost"]`)).toHaveAttribute('data-usd', usd);
  }
  const top = await one(db, `SELECT userId AS u, CAST(SUM(costUsd) AS CHAR) AS usd FROM AiUsageLog WHERE createdAt >= UTC_DATE()
    GROUP BY userId ORDER BY SUM(costUsd) DESC, userId LIMIT 1`);
  await expect(page.getByRole('table', { name: /Top 10 users by cost/ }).locator('tbody tr').first()).toHaveAttribute('data-key', top?.u);
  const users = Number((await one(db, 'SELECT COUNT(DISTINCT userId) AS n FROM AiUsageLog WHERE createdAt >= UTC_DATE()'))?.n);
  await expect(page.getByRole('table', { name: /Top 10 users by cost/ }).locator('tbody tr')).toHaveCount(Math.min(users, 10));
  for (const caption of ['By job type', 'By credential mode']) {
    await expect(page.getByRole('table', { name: caption }).locator('tfoot td[data-col="cost"]')).toHaveAttribute('data-usd', ledger?.usd);
  }
  await screenshot(page, 'usage');

  // The URL is the view: opening it afresh shows the same range.
  const bookmarked = page.url();
  await page.reload();
  await page.getByRole('button', { name: 'Sign in as local admin' }).click();
  await expect(page.getByLabel('From (UTC day)')).toHaveValue(today);
  await expect(page.getByTestId('usage-totals')).toContainText(`(${ledger?.usd} USD)`);
  expect(page.url()).toBe(bookmarked);
});
