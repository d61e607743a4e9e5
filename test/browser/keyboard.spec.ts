/** The main flow by keyboard alone, and a label on every control of every page. */
import { createQuiz, expect, FAILING_TEXT, tabTo, test, waitForState } from './fixtures.ts';

test('keyboard only: sign in, open Jobs, filter failed jobs, open one, retry it and reach the new job', async ({ page, baseUrl, adminToken, db }) => {
  const failed = await createQuiz(baseUrl, adminToken, FAILING_TEXT);
  await waitForState(db, failed, 'failed');
  await page.goto('/console/');
  await tabTo(page, page.getByRole('button', { name: 'Sign in as local admin' }));
  await page.keyboard.press('Enter');
  await tabTo(page, page.getByRole('link', { name: 'Jobs', exact: true }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: 'Jobs' })).toBeFocused();
  await tabTo(page, page.getByLabel('State'));
  await page.keyboard.type('failed');
  await tabTo(page, page.getByRole('button', { name: 'Apply filters' }));
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/status=failed/);
  await tabTo(page, page.getByRole('link', { name: failed }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: `Job ${failed}` })).toBeFocused();
  await tabTo(page, page.getByRole('button', { name: 'Retry job' }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('dialog')).toBeVisible();
  await page.keyboard.press('Tab'); // from Cancel (focused first) to Retry
  await expect(page.getByRole('dialog').getByRole('button', { name: 'Retry', exact: true })).toBeFocused();
  await page.keyboard.press('Enter');
  const link = page.getByTestId('retry-link');
  await expect(link).toBeVisible();
  await tabTo(page, link);
  await page.keyboard.press('Enter');
  await expect(page.getByRole('link', { name: failed })).toBeVisible();
});

test('every page\'s controls have an accessible name, and no page is a placeholder any more', async ({ page }) => {
  await page.goto('/console/');
  await page.getByRole('button', { name: 'Sign in as local admin' }).click();
  const nav = page.getByRole('navigation', { name: 'Console' });
  for (const name of ['Jobs', 'Trouble', 'Usage', 'Budgets', 'Overview']) {
    await nav.getByRole('link', { name, exact: true }).click();
    await expect(page.getByRole('heading', { level: 1, name })).toBeFocused();
    const unnamed = await page.evaluate(() => [...document.querySelectorAll<HTMLElement>('a, button, input, select, textarea')]
      .filter((el) => !(el.getAttribute('aria-label') || (el as HTMLInputElement).labels?.length || el.textContent?.trim()))
      .map((el) => el.outerHTML));
    expect(unnamed, name).toEqual([]);
    await expect(page.locator('[data-placeholder]')).toHaveCount(0);
    // Every table has a caption and every header cell a scope.
    const tables = await page.evaluate(() => [...document.querySelectorAll('table')].map((t) => ({
      caption: t.caption?.textContent?.trim() ?? '', unscoped: [...t.querySelectorAll('th')].filter((th) => !th.getAttribute('scope')).length,
    })));
    for (const t of tables) expect(t.caption, name).not.toBe('');
    for (const t of tables) expect(t.unscoped, `${name}: ${t.caption}`).toBe(0);
  }
});

test('keyboard only: open a running job from a bookmark, cancel it through the dialog, and see it end cancelled', async ({ page, baseUrl, adminToken, db }) => {
  const running = await createQuiz(baseUrl, adminToken, 'Ribosomes build proteins. [scenario:slow:60000]');
  await waitForState(db, running, 'running');
  await page.goto(`/console/jobs/${running}`);
  await tabTo(page, page.getByRole('button', { name: 'Sign in as local admin' }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: `Job ${running}` })).toBeVisible();
  await tabTo(page, page.getByRole('button', { name: 'Cancel job' }));
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Cancel job' });
  await expect(dialog.getByRole('button', { name: 'Cancel', exact: true })).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(dialog.getByRole('button', { name: 'Cancel the job' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('.summary .badge')).toHaveText('cancelled', { timeout: 30_000 });
  await waitForState(db, running, 'cancelled');
});
