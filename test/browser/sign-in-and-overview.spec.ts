/** Sign-in (one click, token only in memory) and the overview's numbers against the database. */
import { createQuiz, expect, FAILING_TEXT, screenshot, signIn, test, waitForQuiet } from './fixtures.ts';

test('one click signs in; the token lives in memory only, so a reload signs out', async ({ page }) => {
  await page.goto('/console/');
  await expect(page.getByRole('heading', { name: 'AI jobs console' })).toBeVisible();
  await screenshot(page, 'sign-in');
  await page.getByRole('button', { name: 'Sign in as local admin' }).click();
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
  await expect(page.getByText('Signed in as local-admin')).toBeVisible();
  const stored = await page.evaluate(() => [Object.keys(localStorage).length, Object.keys(sessionStorage).length, document.cookie]);
  expect(stored).toEqual([0, 0, '']);
  await page.reload();
  await expect(page.getByRole('button', { name: 'Sign in as local admin' })).toBeVisible();
});

test('the overview shows the database\'s job counts, queue depths and outbox backlog, and refreshes itself', async ({ page, baseUrl, adminToken, db }) => {
  await createQuiz(baseUrl, adminToken, 'Photosynthesis turns light into sugar.');
  await createQuiz(baseUrl, adminToken, FAILING_TEXT);
  await waitForQuiet(db);
  await signIn(page);
  const [rows] = await db.query('SELECT lifecycleStatus AS s, COUNT(*) AS n FROM AiJob GROUP BY lifecycleStatus');
  const counts = Object.fromEntries((rows as { s: string; n: number }[]).map((r) => [r.s, Number(r.n)]));
  const tiles = page.getByTestId('jobs-by-state');
  for (const state of ['queued', 'running', 'succeeded', 'failed', 'cancelled']) {
    await expect(tiles.locator(`dd[data-state="${state}"]`)).toHaveText(String(counts[state] ?? 0));
  }
  const [outbox] = await db.query("SELECT COUNT(*) AS n FROM OutboxEvent WHERE status IN ('pending','processing','failed')");
  await expect(page.getByTestId('outbox-backlog')).toContainText(`Backlog: ${Number((outbox as { n: number }[])[0]?.n)}`);
  await expect(page.getByTestId('dlq-interactive')).toHaveText('0');
  await expect(page.getByTestId('dlq-background')).toHaveText('0');

  // Finished jobs in the last hour by outcome (every job of this run finished within it), and the failure rate.
  const [finishedRows] = await db.query(
    "SELECT lifecycleStatus AS s, COUNT(*) AS n FROM AiJob WHERE finishedAt >= NOW(3) - INTERVAL 1 HOUR AND lifecycleStatus IN ('succeeded','failed','cancelled') GROUP BY lifecycleStatus");
  const finished = Object.fromEntries((finishedRows as { s: string; n: number }[]).map((r) => [r.s, Number(r.n)]));
  const lastHour = page.getByTestId('finished-jobs').locator('tr[data-window="lastHour"]');
  for (const outcome of ['succeeded', 'failed', 'cancelled']) {
    await expect(lastHour.locator(`td[data-outcome="${outcome}"]`)).toHaveText(String(finished[outcome] ?? 0));
  }
  const total = (finished.succeeded ?? 0) + (finished.failed ?? 0) + (finished.cancelled ?? 0);
  await expect(lastHour.locator('td[data-outcome="failure-rate"]')).toHaveText(`${((100 * (finished.failed ?? 0)) / total).toFixed(1)} %`);
  await expect(page.getByTestId('throughput-chart').locator('canvas')).toBeVisible();

  // Spend by model: today and 7 days, to the last digit of the ledger (this run's calls are all today, UTC).
  const [spendRows] = await db.query(
    "SELECT CONCAT(provider, '/', model) AS m, CAST(SUM(costUsd) AS CHAR) AS c FROM AiUsageLog WHERE createdAt >= UTC_DATE() GROUP BY provider, model");
  expect((spendRows as unknown[]).length).toBeGreaterThan(0);
  for (const { m, c } of spendRows as { m: string; c: string }[]) {
    const row = page.getByTestId('spend').locator(`tr[data-model="${m}"]`);
    await expect(row.locator('td[data-col="today-cost"]')).toHaveAttribute('data-usd', c);
    await expect(row.locator('td[data-col="week-cost"]')).toHaveAttribute('data-usd', c);
  }
  await screenshot(page, 'overview');

  // A job created now appears without a reload (the page polls the stats).
  const before = counts.failed ?? 0;
  await createQuiz(baseUrl, adminToken, FAILING_TEXT);
  await expect(tiles.locator('dd[data-state="failed"]')).toHaveText(String(before + 1), { timeout: 40_000 });
});
