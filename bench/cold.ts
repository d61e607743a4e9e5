/**
 * `npm run bench:cold`: bundle size and cold start of every Lambda, bundled exactly as the stack bundles it
 * (esbuild with infra/bundling.ts's settings; the migration function with prisma/migrations copied in),
 * beside a minimal handler bundled the same way.
 *
 * Per function (sizes in MiB): the asset's raw size, its zip (`zip -9`, as CDK zips assets; zlib deflate when
 * `zip` is missing), the zip of index.mjs alone (without source map and migrations), and over BENCH_COLD_RUNS
 * fresh `node --enable-source-maps` processes (default 7) the medians of
 * - import_ms: process start → module imported (Lambda's INIT phase),
 * - first_event_ms: process start → first event handled (INIT + the first invoke).
 * Events: an empty SQS batch (consumers), an unauthenticated API request (401 before any DB access), a
 * scheduled tick (dispatcher, reaper: a real query against an empty, migrated database), a migration run
 * with nothing to apply. Every bundle is also imported once with an unreachable DATABASE_URL: `db_at_init=no`
 * means importing it opened no connection. Last line: cold_ratio=<worst first_event / minimal first_event>.
 *
 * Env: DATABASE_URL (server; the bench uses database `aijobs_bench_cold`), BENCH_COLD_RUNS.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { startFauxqs } from 'fauxqs';
import { SQSClient } from '@aws-sdk/client-sqs';
import { BUNDLED_MIGRATIONS_DIR, ESBUILD_SETTINGS, LAMBDA_ENTRIES, PROJECT_ROOT, type LambdaName } from '../infra/bundling.ts';
import { bundleLambda } from './lambda-bundle.ts';
import { databaseUrlFromEnv, withDatabase } from '../lib/db/database-url.ts';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { createJobQueues } from '../lib/queue/create-queues.ts';

const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 7);
const UNREACHABLE_DB = 'mysql://bench@127.0.0.1:9/none';
const work = mkdtempSync(path.join(tmpdir(), 'bench-cold-'));

type Target = LambdaName | 'Minimal';
interface Scenario { event: unknown; describe: string; needsDb: boolean }

const apiEvent = (routeKey: string) => ({
  version: '2.0', routeKey, rawPath: '/', rawQueryString: '', headers: {}, isBase64Encoded: false,
  requestContext: { http: { method: routeKey.split(' ')[0], path: '/' }, requestId: 'bench', routeKey, stage: '$default' },
});
const tick = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };

const SCENARIOS: Record<Target, Scenario> = {
  Minimal: { event: {}, describe: 'minimal handler', needsDb: false },
  ApiUser: { event: apiEvent('GET /api/ai/jobs/{jobId}'), describe: 'GET without JWT claims (401)', needsDb: false },
  ApiAdmin: { event: apiEvent('GET /admin-api/ai/stats'), describe: 'GET without JWT claims (401)', needsDb: false },
  ApiStream: { event: apiEvent('GET /api/ai/jobs/{jobId}/stream'), describe: 'GET without JWT claims (401)', needsDb: false },
  ConsumerInteractive: { event: { Records: [] }, describe: 'empty SQS batch', needsDb: false },
  ConsumerBackground: { event: { Records: [] }, describe: 'empty SQS batch', needsDb: false },
  Dispatcher: { event: tick, describe: 'scheduled tick, empty outbox (DB)', needsDb: true },
  Reaper: { event: tick, describe: 'scheduled tick, nothing to reap (DB + SQS)', needsDb: true },
  Maintenance: { event: tick, describe: 'scheduled tick: rollups and retention, nothing to do (DB)', needsDb: true },
  Migrate: { event: {}, describe: 'deploy trigger, nothing to apply (DB)', needsDb: true },
};

/** Bundles `entry` into a directory of its own, as NodejsFunction does (./lambda-bundle.ts). */
function bundle(name: Target, entry: string, withMigrations: boolean): Promise<string> {
  return bundleLambda(entry, path.join(work, name), { withMigrations });
}

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** Zipped size of `names` (relative to `dir`): `zip -9` as CDK zips assets, else the sum of deflated files. */
function zippedSize(dir: string, names: string[], label: string): { bytes: number; tool: string } {
  const zipFile = path.join(work, `${path.basename(dir)}-${label}.zip`);
  rmSync(zipFile, { force: true });
  if (spawnSync('zip', ['-q', '-r', '-9', '-X', zipFile, ...names], { cwd: dir }).status === 0) {
    return { bytes: statSync(zipFile).size, tool: 'zip -9' };
  }
  const all = names.flatMap((n) => (statSync(path.join(dir, n)).isDirectory() ? files(path.join(dir, n)) : [path.join(dir, n)]));
  return { bytes: all.reduce((sum, f) => sum + deflateRawSync(readFileSync(f), { level: 9 }).length + 100, 0), tool: 'zlib deflate' };
}

/** The asset's raw size, its zip, and the zip of the code alone (without source map and migrations). */
function sizes(dir: string): { raw: number; zipped: number; codeZipped: number; zipTool: string } {
  const raw = files(dir).reduce((sum, f) => sum + statSync(f).size, 0);
  const asset = zippedSize(dir, ['.'], 'asset');
  return { raw, zipped: asset.bytes, codeZipped: zippedSize(dir, [ESBUILD_SETTINGS.outfileName], 'code').bytes, zipTool: asset.tool };
}

const RUNNER = `
const [bundle, mode] = process.argv.slice(2);
const mod = await import(bundle);
const imported = performance.now();
let handled = null, outcome = 'imported';
if (mode === 'invoke') {
  const context = { functionName: 'bench', awsRequestId: 'bench', getRemainingTimeInMillis: () => 50000 };
  try {
    const r = await mod.handler(JSON.parse(process.env.BENCH_EVENT), context);
    outcome = r && typeof r === 'object' && 'statusCode' in r ? 'status ' + r.statusCode : 'ok';
  } catch (e) { outcome = ('error ' + (e && e.name) + ': ' + (e && e.message)).slice(0, 160); }
  handled = performance.now();
}
process.stdout.write('\\n@@cold ' + JSON.stringify({ imported, handled, outcome }) + '\\n');
process.exit(0);
`;

interface RunResult { imported: number; handled: number | null; outcome: string }

/** One fresh process: imports the bundle and (in `invoke` mode) handles one event. */
function runOnce(dir: string, mode: 'import' | 'invoke', env: Record<string, string>, event: unknown): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--enable-source-maps', path.join(work, 'runner.mjs'), path.join(dir, 'index.mjs'), mode], {
      env: { PATH: process.env.PATH ?? '', ...env, BENCH_EVENT: JSON.stringify(event) },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    child.on('close', () => {
      const line = out.split('\n').find((l) => l.startsWith('@@cold '));
      if (line) resolve(JSON.parse(line.slice(7)) as RunResult);
      else reject(new Error(`${path.basename(dir)} (${mode}) printed no result:\n${out.slice(-2000)}`));
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The environment a deployed function would have, pointed at local servers. */
async function lambdaEnvironment(): Promise<{ env: Record<string, string>; dbUrl: string | undefined; stop(): Promise<void> }> {
  const sqsServer = await startFauxqs({ port: 0, logger: false, host: '127.0.0.1' } as Parameters<typeof startFauxqs>[0]);
  const endpoint = `http://127.0.0.1:${sqsServer.port}`;
  const sqs = new SQSClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  const queues = await createJobQueues(sqs, 'bench-cold');
  sqs.destroy();
  let dbUrl: string | undefined = withDatabase(databaseUrlFromEnv(), 'aijobs_bench_cold');
  try {
    await migrateDatabase(dbUrl);
  } catch (err) {
    console.log(`# no database (${(err as Error).message.slice(0, 80)}): DB-touching functions are skipped`);
    dbUrl = undefined;
  }
  const env = {
    STAGE: 'bench', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x',
    AWS_ENDPOINT_URL: endpoint, POWERTOOLS_LOG_LEVEL: 'WARN',
    INTERACTIVE_QUEUE_URL: queues.interactive.queueUrl, BACKGROUND_QUEUE_URL: queues.background.queueUrl,
    INTERACTIVE_DLQ_URL: queues.interactive.deadLetterQueueUrl, BACKGROUND_DLQ_URL: queues.background.deadLetterQueueUrl,
    EVENT_BUS_NAME: 'bench', CREDENTIALS_KMS_KEY_ID: 'alias/bench', PLATFORM_PROVIDER_SECRET_ID: 'bench',
    MIGRATIONS_DIR: '', DATABASE_CONNECTION_LIMIT: '3',
  };
  return { env, dbUrl, stop: () => sqsServer.stop() };
}

async function measure(name: Target, dir: string, base: Record<string, string>, dbUrl: string | undefined): Promise<number | undefined> {
  const scenario = SCENARIOS[name];
  const { raw, zipped, codeZipped, zipTool } = sizes(dir);
  const env = { ...base, DATABASE_URL: UNREACHABLE_DB, MIGRATIONS_DIR: path.join(dir, BUNDLED_MIGRATIONS_DIR) };
  const initCheck = await runOnce(dir, 'import', env, scenario.event).then(() => 'no', (err: Error) => `YES (${err.message.slice(0, 80)})`);
  const mb = (n: number) => (n / 1_048_576).toFixed(2);
  const head = `fn=${name} raw_mib=${mb(raw)} zip_mib=${mb(zipped)} code_zip_mib=${mb(codeZipped)} (${zipTool}) db_at_init=${initCheck}`;
  if (scenario.needsDb && !dbUrl) {
    console.log(`${head} first_event=skipped (needs a database)`);
    return undefined;
  }
  const runEnv = scenario.needsDb ? { ...env, DATABASE_URL: dbUrl! } : env;
  const runs: RunResult[] = [];
  for (let i = 0; i < RUNS; i += 1) runs.push(await runOnce(dir, 'invoke', runEnv, scenario.event));
  const first = median(runs.map((r) => r.handled!));
  const imported = median(runs.map((r) => r.imported));
  console.log(`${head} import_ms=${imported.toFixed(0)} first_event_ms=${first.toFixed(0)} runs=${RUNS}`
    + ` event="${scenario.describe}" outcome="${runs[0]!.outcome}"`);
  return first;
}

async function main(): Promise<void> {
  writeFileSync(path.join(work, 'runner.mjs'), RUNNER);
  mkdirSync(path.join(work, 'src'));
  writeFileSync(path.join(work, 'src', 'minimal.ts'), 'export const handler = async (): Promise<{ ok: boolean }> => ({ ok: true });\n');
  const targets: [Target, string, boolean][] = [
    ['Minimal', path.join(work, 'src', 'minimal.ts'), false],
    ...Object.entries(LAMBDA_ENTRIES).map(([name, e]): [Target, string, boolean] =>
      [name as LambdaName, path.join(PROJECT_ROOT, e.entry), 'withMigrations' in e && e.withMigrations]),
  ];
  const dirs = await Promise.all(targets.map(([name, entry, migrations]) => bundle(name, entry, migrations)));
  const { env, dbUrl, stop } = await lambdaEnvironment();
  try {
    const firstEvent = new Map<Target, number>();
    for (const [i, [name]] of targets.entries()) {
      const ms = await measure(name, dirs[i]!, env, dbUrl);
      if (ms !== undefined) firstEvent.set(name, ms);
    }
    const minimal = firstEvent.get('Minimal')!;
    const [worstName, worst] = [...firstEvent].filter(([n]) => n !== 'Minimal').sort((a, b) => b[1] - a[1])[0]!;
    console.log(`# worst: ${worstName} ${worst.toFixed(0)} ms vs minimal ${minimal.toFixed(0)} ms (node ${process.version})`);
    console.log(`cold_ratio=${(worst / minimal).toFixed(2)}`);
  } finally {
    await stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
