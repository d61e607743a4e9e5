/** Cancelling a running job from its page: confirmation, then the page follows it to `cancelled`. */
import { createQuiz, expect, one, screenshot, signIn, test, waitForState } from './fixtures.ts';

/** The mock provider answers this quiz after 60 s (lib/dev/mock-ai-server.ts `[scenario:slow:<ms>]`), so it stays running. */
const SLOW_TEXT = 'Enzymes speed up reactions. [scenario:slow:60000]';

test('cancel asks first, then stops a running job, and the page shows it end cancelled', async ({ page, baseUrl, adminToken, db }) => {
  const jobId = await createQuiz(baseUrl, adminToken, SLOW_TEXT);
  await waitForState(db, jobId, 'running');
  await signIn(page, `/console/jobs/${jobId}`);
  await expect(page.getByRole('heading', { name: `Job ${jobId}` })).toBeVisible();
  await expect(page.locator('.summary .badge')).toHaveText('running');

  await page.getByRole('button', { name: 'Cancel job' }).click();
  const dialog = page.getByRole('dialog', { name: 'Cancel job' });
  await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
  await expect(dialog).toBeHidden();
  expect((await one(db, 'SELECT cancelRequestedAt AS c FROM AiJob WHERE id = ?', [jobId]))?.c).toBeNull();

  await page.getByRole('button', { name: 'Cancel job' }).click();
  await dialog.getByRole('button', { name: 'Cancel the job' }).click();
  await expect(page.getByTestId('cancel-result')).toContainText(/Cancellation requested|Cancelled/);
  // The page refreshes an open job by itself until it ends.
  await expect(page.locator('.summary .badge')).toHaveText('cancelled', { timeout: 30_000 });
  await waitForState(db, jobId, 'cancelled');
  const last = await one(db, "SELECT reason FROM AiJobTransition WHERE jobId = ? AND toStatus = 'cancelled'", [jobId]);
  expect(last?.reason).toBe('cancel requested while running');
  const requestedBy = await one(db, 'SELECT cancelRequestedAt AS c FROM AiJob WHERE id = ?', [jobId]);
  expect(requestedBy?.c).not.toBeNull();
  await expect(page.getByRole('button', { name: 'Cancel job' })).toBeDisabled();
  await expect(page.getByRole('table', { name: 'State transitions, oldest first' }).locator('tbody tr').last()).toContainText('cancelled');
  await screenshot(page, 'job-detail-cancelled');
});
