/** The jobs list's filters (kept in the URL), a link to a job's detail page, and what the detail shows. */
import { createQuiz, expect, FAILING_TEXT, one, screenshot, signIn, test, waitForState } from './fixtures.ts';

test('filtering by state puts the filter in the URL, lists exactly the matching jobs, and links to their detail', async ({ page, baseUrl, adminToken, db }) => {
  const failed = await createQuiz(baseUrl, adminToken, FAILING_TEXT);
  const ok = await createQuiz(baseUrl, adminToken, 'Water boils at 100 degrees at sea level.');
  await waitForState(db, failed, 'failed');
  await waitForState(db, ok, 'succeeded');
  await signIn(page);
  await page.getByRole('link', { name: 'Jobs', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Jobs' })).toBeVisible();
  await page.getByLabel('State').selectOption('failed');
  await page.getByLabel('User').fill('local-admin');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(/\/console\/jobs\?status=failed&userId=local-admin/);
  const rows = page.locator('tbody tr[data-job-id]');
  const expected = Number((await one(db, "SELECT COUNT(*) AS n FROM AiJob WHERE lifecycleStatus = 'failed' AND userId = 'local-admin'"))?.n);
  await expect(rows).toHaveCount(Math.min(expected, 25));
  await expect(page.locator(`tr[data-job-id="${failed}"]`)).toBeVisible();
  await expect(page.locator(`tr[data-job-id="${ok}"]`)).toHaveCount(0);
  await screenshot(page, 'jobs');

  // The URL is the view: opening it afresh (after signing in) shows the same filter.
  const bookmarked = page.url();
  await page.reload();
  await page.getByRole('button', { name: 'Sign in as local admin' }).click();
  await expect(page.getByLabel('State')).toHaveValue('failed');
  expect(page.url()).toBe(bookmarked);

  await page.getByRole('link', { name: failed }).click();
  await expect(page.getByRole('heading', { name: `Job ${failed}` })).toBeVisible();
  const transitions = Number((await one(db, 'SELECT COUNT(*) AS n FROM AiJobTransition WHERE jobId = ?', [failed]))?.n);
  await expect(page.getByRole('table', { name: 'State transitions, oldest first' }).locator('tbody tr')).toHaveCount(transitions);
  const job = await one(db, 'SELECT errorCode FROM AiJob WHERE id = ?', [failed]);
  await expect(page.getByText(`${job?.errorCode}:`).first()).toBeVisible();
  await screenshot(page, 'job-detail-failed');

  await page.goto(`/console/jobs/${ok}`);
  await page.getByRole('button', { name: 'Sign in as local admin' }).click();
  await expect(page.getByRole('heading', { name: 'Artifacts' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Retry job' })).toBeDisabled();
  const usage = await one(db, 'SELECT SUM(promptTokens) AS p FROM AiUsageLog WHERE jobId = ?', [ok]);
  await expect(page.getByRole('table', { name: /Provider calls per attempt/ }).locator('tfoot')).toContainText(String(usage?.p));
  const latency = await one(db, 'SELECT SUM(latencyMs) AS ms FROM AiUsageLog WHERE jobId = ? AND attemptNo = 1', [ok]);
  await expect(page.locator('tr[data-attempt="1"] td[data-col="latency"]')).toHaveText(`${Number(latency?.ms).toLocaleString('en-US')} ms`);
  const snapshot = await one(db, 'SELECT content FROM AiJobSnapshot WHERE jobId = ?', [ok]);
  const content = typeof snapshot?.content === 'string' ? JSON.parse(snapshot.content) : snapshot?.content;
  expect(JSON.parse((await page.getByTestId('input-snapshot').textContent()) ?? '')).toEqual(content);
  const questions = Number((await one(db, 'SELECT COUNT(*) AS n FROM QuizQuestion WHERE jobId = ?', [ok]))?.n);
  expect(questions).toBeGreaterThan(0);
  await expect(page.getByRole('table', { name: 'Business rows: questions' }).locator('tbody tr')).toHaveCount(questions);
  await screenshot(page, 'job-detail-succeeded');
});
