/**
 * A job parked for provider capacity (docs/budgets.md): its detail page says why it waits and until when, with no
 * attempt spent; once the model's cooldown ends the job runs and succeeds. The cooldown on the local model
 * (mock/mock-chat, what every local job calls) is seeded in the database and short, so the spec cleans up after
 * itself: the parked job comes back when the cooldown ends.
 */
import { createQuiz, expect, one, screenshot, signIn, test, waitForState } from './fixtures.ts';

const COOLDOWN_SECONDS = 30;

test.afterAll(async ({ db }) => {
  await db.query("UPDATE ProviderLimit SET cooldownUntil = NULL WHERE provider = 'mock' AND model = 'mock-chat'");
});

// The cooldown, then the job's run, on a shared machine.
test.setTimeout(150_000);
test('a job waiting for provider capacity shows why and until when, then runs once the cooldown ends', async ({ page, baseUrl, adminToken, db }) => {
  await db.query(`INSERT INTO ProviderLimit (provider, model, rpm, tpm, maxInFlight, source, updatedAt, cooldownUntil, rateFactor)
    VALUES ('mock', 'mock-chat', 100000, 100000000, 1000, 'config', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ${COOLDOWN_SECONDS} SECOND, 1000)
    ON DUPLICATE KEY UPDATE cooldownUntil = VALUES(cooldownUntil)`);
  const jobId = await createQuiz(baseUrl, adminToken, 'Light travels at about 300,000 km per second.');
  await expect.poll(async () => (await one(db, 'SELECT reason FROM CapacityWait WHERE jobId = ?', [jobId]))?.reason, { timeout: 20_000 })
    .toBe('provider_capacity');

  await signIn(page, `/console/jobs/${jobId}`);
  await expect(page.getByRole('heading', { name: `Job ${jobId}` })).toBeVisible();
  const waiting = page.locator('dl.summary div').filter({ has: page.getByText('Waiting for', { exact: true }) }).locator('dd');
  await expect(waiting).toContainText(/^provider capacity until .+no attempt spent\)$/);
  expect(await one(db, 'SELECT attemptCount FROM AiJob WHERE id = ?', [jobId])).toMatchObject({ attemptCount: 0 });
  await screenshot(page, 'job-detail-waiting');

  await waitForState(db, jobId, 'succeeded', COOLDOWN_SECONDS * 1000 + 60_000);
  await page.reload();
  await page.getByRole('button', { name: 'Sign in as local admin' }).click();
  await expect(page.getByRole('heading', { name: 'Artifacts' })).toBeVisible();
  await expect(page.locator('dl.summary div').filter({ has: page.getByText('Waiting for', { exact: true }) }).locator('dd')).toHaveText('—');
});
