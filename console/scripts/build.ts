/**
 * Builds the console with vite into console/dist and enforces the size budget of the shipped JavaScript
 * (gzip, as browsers download it). `npm run console:build` prints the report; `npm start` calls
 * {@link ensureConsoleBuilt}, which builds only when the sources are newer than the last build.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** The console's sources (inputs of the build) and its output. */
export const CONSOLE_DIR = fileURLToPath(new URL('..', import.meta.url));
export const CONSOLE_DIST = join(CONSOLE_DIR, 'dist');
const STAMP = join(CONSOLE_DIST, '.build-stamp');

/** Budget for all shipped JavaScript, gzip-compressed. */
export const JS_BUDGET_GZIP_BYTES = 60 * 1024;

export interface BuildReport {
  files: { file: string; bytes: number; gzipBytes: number }[];
  totalGzipBytes: number;
  budgetGzipBytes: number;
  overBudget: boolean;
}

/** Thrown when the shipped JavaScript is over {@link JS_BUDGET_GZIP_BYTES}. */
export class ConsoleOverBudgetError extends Error {
  override readonly name = 'ConsoleOverBudgetError';
  constructor(readonly report: BuildReport) {
    super(`console JavaScript is ${kb(report.totalGzipBytes)} gzip, over the budget of ${kb(report.budgetGzipBytes)}`);
  }
}

/** Runs vite's production build, then measures the JavaScript it wrote. */
export async function buildConsole(): Promise<BuildReport> {
  const { build } = await import('vite');
  await build({ configFile: join(CONSOLE_DIR, 'vite.config.ts'), logLevel: 'warn' });
  const report = await measureJs();
  await writeFile(STAMP, `${new Date().toISOString()}\n`);
  return report;
}

async function measureJs(): Promise<BuildReport> {
  const assets = join(CONSOLE_DIST, 'assets');
  const names = (await readdir(assets)).filter((n) => n.endsWith('.js')).sort();
  const files = await Promise.all(names.map(async (file) => {
    const content = await readFile(join(assets, file));
    return { file: `assets/${file}`, bytes: content.length, gzipBytes: gzipSync(content, { level: 9 }).length };
  }));
  const totalGzipBytes = files.reduce((n, f) => n + f.gzipBytes, 0);
  return { files, totalGzipBytes, budgetGzipBytes: JS_BUDGET_GZIP_BYTES, overBudget: totalGzipBytes > JS_BUDGET_GZIP_BYTES };
}

/** The report as printed lines. */
export function formatReport(report: BuildReport): string[] {
  return [
    ...report.files.map((f) => `  ${f.file}  ${kb(f.bytes)}  (${kb(f.gzipBytes)} gzip)`),
    `console JavaScript: ${kb(report.totalGzipBytes)} gzip of a ${kb(report.budgetGzipBytes)} budget${report.overBudget ? ' — OVER BUDGET' : ''}`,
  ];
}

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} kB`;
}

async function newestMtime(path: string): Promise<number> {
  const s = await stat(path);
  if (!s.isDirectory()) return s.mtimeMs;
  const entries = await readdir(path);
  const times = await Promise.all(entries.filter((e) => e !== 'dist' && e !== 'node_modules').map((e) => newestMtime(join(path, e))));
  return Math.max(s.mtimeMs, ...times);
}

/** True when console/dist is missing or older than any source file under console/. */
export async function consoleBuildIsStale(): Promise<boolean> {
  const built = await stat(STAMP).then((s) => s.mtimeMs, () => null);
  return built === null || (await newestMtime(CONSOLE_DIR)) > built;
}

/**
 * Builds the console when it is missing or stale (a newcomer's first `npm start` takes a few seconds more).
 * @throws ConsoleOverBudgetError when the new build is over budget
 */
export async function ensureConsoleBuilt(log: (line: string) => void): Promise<void> {
  if (!(await consoleBuildIsStale())) return;
  log('building the admin console (console/ changed since the last build)…');
  const report = await buildConsole();
  for (const line of formatReport(report)) log(line);
  if (report.overBudget) throw new ConsoleOverBudgetError(report);
}
