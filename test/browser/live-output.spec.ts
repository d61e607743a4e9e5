/**
 * A running job's page shows its output as the model writes it — the text growing — then its result, and its
 * status changes, without a reload (console/src/components/live-output.tsx through lib/client/watch-job.ts, the
 * local realtime hub and the admin stream route).
 */
import { expect, one, screenshot, signIn, test, waitForState } from './fixtures.ts';

/** The mock writes this evaluation at 6 tokens a second (lib/dev/mock-ai-server.ts `[tps:<n>]`): about ten seconds. */
async function createSlowEvaluation(baseUrl: string, token: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/ai/feynman-evaluations`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ concept: 'Osmosis', explanation: 'Water moves across a membrane towards the saltier side. [tps:6]' }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { jobId: string }).jobId;
}

test('a running job\'s text grows on its page, then its result shows, without a reload', async ({ page, baseUrl, adminToken, db }) => {
  const jobId = await createSlowEvaluation(baseUrl, adminToken);
  await signIn(page, `/console/jobs/${jobId}`);
  await expect(page.getByRole('heading', { name: `Job ${jobId}` })).toBeVisible();
  await page.evaluate(() => { (window as unknown as { sameDocument: boolean }).sameDocument = true; });
  let navigations = 0;
  page.on('framenavigated', (frame) => { if (frame === page.mainFrame()) navigations += 1; });

  const text = page.getByTestId('live-text-feedback');
  await expect(text).not.toBeEmpty();
  await expect(page.getByTestId('live-state')).toContainText('live');
  await expect(page.locator('.summary .badge')).toHaveText('running');
  const first = (await text.textContent()) ?? '';
  await expect.poll(async () => ((await text.textContent()) ?? '').length).toBeGreaterThan(first.length);
  const later = (await text.textContent()) ?? '';
  expect(later.startsWith(first)).toBe(true);
  await screenshot(page, 'job-detail-live');

  await expect(page.locator('.summary .badge')).toHaveText('succeeded', { timeout: 60_000 });
  await waitForState(db, jobId, 'succeeded');
  const row = await one(db, 'SELECT feedback FROM FeynmanEvaluation WHERE jobId = ?', [jobId]);
  await expect(text).toHaveText(String(row?.feedback));
  await expect(page.getByRole('table', { name: 'Business row: evaluation' })).toContainText(String(row?.feedback));
  await expect(page.getByTestId('live-state')).toContainText('finished');
  expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  expect(navigations).toBe(0);
  await screenshot(page, 'job-detail-live-done');
});
