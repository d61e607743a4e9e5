/**
 * What the browser specs share: the runtime's URL, the database behind it (read-only checks, plus seeding
 * the rare outcomes a spec cannot wait for), jobs created through the real user API, a keyboard helper and
 * screenshots.
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expect, test as base, type Locator, type Page } from '@playwright/test';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';

/** Where every run writes a screenshot of each page (gitignored). */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../.scratch/console-screens/', import.meta.url));

export interface ConsoleFixtures {
  baseUrl: string;
  db: mysql.Connection;
  /** An admin token from the local sign-in route (its `sub` is `local-admin`). */
  adminToken: string;
}

export const test = base.extend<ConsoleFixtures>({
  baseUrl: async ({}, use) => use(process.env.CONSOLE_BASE_URL ?? ''),
  baseURL: async ({}, use) => use(process.env.CONSOLE_BASE_URL ?? ''),
  db: async ({}, use) => {
    const s = parseDatabaseUrl(process.env.CONSOLE_DATABASE_URL ?? '');
    const conn = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password, database: s.database });
    await use(conn);
    await conn.end();
  },
  adminToken: async ({ baseUrl }, use) => {
    const res = await fetch(`${baseUrl}/local/console-token`, { method: 'POST' });
    await use(((await res.json()) as { token: string }).token);
  },
});
export { expect };

/** Creates a quiz job through the user API and returns its id. */
export async function createQuiz(baseUrl: string, token: string, sourceText: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/ai/quiz-generations`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sourceText, count: 2, difficulty: 'easy' }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { jobId: string }).jobId;
}

/** A quiz that fails for real: the mock provider answers 401 to it (and to its retries). */
export const FAILING_TEXT = 'Mitochondria make ATP. [scenario:unauthorized]';

/** Waits until the job is in `state` in the database. */
export async function waitForState(db: mysql.Connection, jobId: string, state: string, timeout = 30_000): Promise<void> {
  await expect.poll(async () => (await one(db, 'SELECT lifecycleStatus AS s FROM AiJob WHERE id = ?', [jobId]))?.s, { timeout }).toBe(state);
}

/** Waits until no job is queued or running, so counts stay still while a spec compares them. */
export async function waitForQuiet(db: mysql.Connection): Promise<void> {
  await expect.poll(async () => Number((await one(db, "SELECT COUNT(*) AS n FROM AiJob WHERE lifecycleStatus IN ('queued','running')"))?.n), { timeout: 60_000 }).toBe(0);
}

/** The first row of a query. */
export async function one(db: mysql.Connection, sql: string, params: unknown[] = []): Promise<Record<string, any> | undefined> {
  const [rows] = await db.query(sql, params);
  return (rows as Record<string, any>[])[0];
}

/** Signs in with the one-click local button and waits for the overview. */
export async function signIn(page: Page, path = '/console/'): Promise<void> {
  await page.goto(path);
  await page.getByRole('button', { name: 'Sign in as local admin' }).click();
  await expect(page.getByRole('navigation', { name: 'Console' })).toBeVisible();
}

/** Presses Tab until `target` has focus (at most `max` times); fails when it never does. */
export async function tabTo(page: Page, target: Locator, max = 60): Promise<void> {
  for (let i = 0; i < max; i += 1) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el === document.activeElement)) return;
  }
  throw new Error(`Tab never reached ${target}`);
}

/** A full-page screenshot at .scratch/console-screens/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOT_DIR}${name}.png`, fullPage: true });
}
