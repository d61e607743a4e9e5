/** Retrying from a job's page (with confirmation, linking the new job) and bulk retry on the Trouble page. */
import { createQuiz, expect, FAILING_TEXT, one, screenshot, signIn, test, waitForState } from './fixtures.ts';

test('retrying a failed job asks first, then links the new job, whose page links back', async ({ page, baseUrl, adminToken, db }) => {
  const failed = await createQuiz(baseUrl, adminToken, FAILING_TEXT);
  await waitForState(db, failed, 'failed');
  await signIn(page, `/console/jobs/${failed}`);
  await page.getByRole('button', { name: 'Retry job' }).click();
  const dialog = page.getByRole('dialog', { name: 'Retry job' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toBeHidden();
  expect(await one(db, 'SELECT id FROM AiJob WHERE parentJobId = ?', [failed])).toBeUndefined();

  await page.getByRole('button', { name: 'Retry job' }).click();
  await dialog.getByRole('button', { name: 'Retry', exact: true }).click();
  const link = page.getByTestId('retry-link');
  await expect(link).toBeVisible();
  const child = await one(db, 'SELECT id, triggerType FROM AiJob WHERE parentJobId = ?', [failed]);
  expect(child?.triggerType).toBe('admin_retry');
  await expect(link).toHaveText(child?.id);
  await screenshot(page, 'job-detail-retried');
  await link.click();
  await expect(page.getByRole('heading', { name: `Job ${child?.id}` })).toBeVisible();
  await expect(page.getByRole('link', { name: failed })).toBeVisible();
});

test('the Trouble page lists jobs that ended DEAD_LETTERED or LEASE_EXPIRED and retries the selected ones', async ({ page, baseUrl, adminToken, db }) => {
  const ids = [await createQuiz(baseUrl, adminToken, FAILING_TEXT), await createQuiz(baseUrl, adminToken, FAILING_TEXT)];
  for (const id of ids) await waitForState(db, id, 'failed');
  // Stand in for the reaper's verdicts (a dead-lettered message, an expired lease) rather than wait for them.
  await db.query("UPDATE AiJob SET errorCode = 'DEAD_LETTERED' WHERE id = ?", [ids[0]]);
  await db.query("UPDATE AiJob SET errorCode = 'LEASE_EXPIRED' WHERE id = ?", [ids[1]]);
  await signIn(page);
  await page.getByRole('link', { name: 'Trouble' }).click();
  await expect(page.getByRole('table', { name: 'Failed with DEAD_LETTERED' }).locator(`tr[data-job-id="${ids[0]}"]`)).toBeVisible();
  await expect(page.getByRole('table', { name: 'Failed with LEASE_EXPIRED' }).locator(`tr[data-job-id="${ids[1]}"]`)).toBeVisible();
  for (const id of ids) await page.getByLabel(`Select job ${id}`).check();
  await page.getByRole('button', { name: 'Retry selected (2)' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Retry 2 jobs' }).click();
  const results = page.getByRole('list', { name: 'Retry results' });
  await expect(results.getByText('retried as')).toHaveCount(2);
  for (const id of ids) {
    const child = await one(db, 'SELECT id FROM AiJob WHERE parentJobId = ?', [id]);
    await expect(results.getByRole('link', { name: child?.id })).toBeVisible();
  }
  await screenshot(page, 'trouble');
});

test('the Trouble page lists a job queued beyond its queue\'s bound, as the reaper report sees it, without offering to retry it', async ({ page, baseUrl, adminToken, db }) => {
  const source = await createQuiz(baseUrl, adminToken, FAILING_TEXT);
  await waitForState(db, source, 'failed');
  // A job queued for 40 minutes (beyond the bounds of both queues, 5 and 30 minutes): a copy of a real row, with
  // no outbox row, so neither the dispatcher nor the reaper moves it while the page looks; deleted after.
  const stuck = `01STUCK${Date.now().toString(36).toUpperCase()}`.padEnd(26, '0').slice(0, 26);
  const reset: Record<string, string> = {
    id: '?', lifecycleStatus: "'queued'", createdAt: 'NOW(3) - INTERVAL 40 MINUTE', updatedAt: 'NOW(3)', startedAt: 'NULL', finishedAt: 'NULL',
    errorCode: 'NULL', publicErrorMessage: 'NULL', internalErrorMessage: 'NULL', attemptCount: '0', leaseVersion: '0',
    lockedBy: 'NULL', lockedAt: 'NULL', lockUntil: 'NULL', idempotencyKey: 'NULL', progress: '0',
  };
  const [cols] = await db.query("SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'AiJob' ORDER BY ORDINAL_POSITION");
  const names = (cols as { c: string }[]).map((r) => r.c);
  await db.query(`INSERT INTO AiJob (${names.map((n) => `\`${n}\``).join(', ')}) SELECT ${names.map((n) => reset[n] ?? `\`${n}\``).join(', ')} FROM AiJob WHERE id = ?`, [stuck, source]);
  try {
    await signIn(page);
    await page.getByRole('link', { name: 'Trouble' }).click();
    const row = page.getByTestId('stuck-jobs').locator(`tr[data-job-id="${stuck}"]`);
    await expect(row).toHaveAttribute('data-kind', 'queued_not_picked_up');
    await expect(row).toContainText('Queued, not picked up');
    await expect(row.getByRole('link', { name: stuck })).toBeVisible();
    await expect(page.getByLabel(`Select job ${stuck}`)).toHaveCount(0);
    await screenshot(page, 'trouble-stuck');
  } finally {
    await db.query('DELETE FROM AiJob WHERE id = ?', [stuck]);
  }
});
