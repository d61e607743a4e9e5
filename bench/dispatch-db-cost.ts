/**
 * `npm run bench:dispatch-db`: MariaDB instructions per published outbox row, counted by callgrind on a
 * private mariadbd run under valgrind. Unlike CPU seconds on this shared machine (±15% between identical
 * runs), the count repeats to about 1%, so a change to the dispatcher's SQL can be judged by one run.
 *
 * One real dispatcher drains a pre-filled outbox (BENCH_ROWS, default 5,000) onto fauxqs. The count covers
 * everything the server does for it: claims, job lookups, settles, and InnoDB's purge of the old row versions
 * (waited for before the count is taken). Rounds (BENCH_ROUNDS, default 2) should agree.
 *
 * Needs valgrind, mariadbd and mariadb-install-db (Debian: valgrind, mariadb-server; /usr/sbin is searched
 * too). The server gets a throw-away data directory and a free port, and is stopped at the end. Slow: the
 * server runs ~50× slower under valgrind (about a minute per round).
 * Last line: mariadb_instructions_per_row=<millions>.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { migrateDatabase } from '../lib/db/migrator.ts';
import { DEFAULT_DISPATCH_POLICY } from '../lib/outbox/dispatcher-deps.ts';
import { freePort, waitFor } from '../test/helpers/ports.ts';
import { drainOutbox, freshQueues, prefillOutbox, settleUndoHistory, startSqsServer } from './dispatch-fixtures.ts';

const rows = Number(process.env.BENCH_ROWS ?? 5_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const env = { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` };
const dir = mkdtempSync(join(tmpdir(), 'bench-dispatch-db-'));
const server = await startProfiledMariadb();
const sqsServer = await startSqsServer();
try {
  const url = `mysql://root@127.0.0.1:${server.port}/aijobs_bench_dispatch_db`;
  await migrateDatabase(url);
  const pool = mysql.createPool({ host: '127.0.0.1', port: server.port, user: 'root', database: 'aijobs_bench_dispatch_db', connectionLimit: 2, timezone: 'Z' });
  const perRow: number[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    await prefillOutbox(pool, rows);
    const queueUrls = await freshQueues(sqsServer.endpoint);
    let instructions = 0;
    const published = await drainOutbox({
      url, sqsEndpoint: sqsServer.endpoint, queueUrls, dispatchers: 1, policy: {},
      measure: async (drain) => {
        callgrind('-z'); // zero the counters
        const result = await drain();
        await settleUndoHistory(pool, 120_000);
        instructions = dumpedInstructions();
        return result;
      },
    });
    if (published !== rows) throw new Error(`expected ${rows} published rows, got ${published}`);
    perRow.push(instructions / rows / 1e6);
    console.log(`round ${round}: ${published} rows, ${(instructions / 1e9).toFixed(2)} G instructions`);
  }
  await pool.end();
  console.log(`rows=${rows} batch=${DEFAULT_DISPATCH_POLICY.batchSize} in_flight_batches=${DEFAULT_DISPATCH_POLICY.batchesInFlight} dispatchers=1 rounds=${rounds}`);
  console.log(`round_instructions_per_row_millions=${perRow.map((x) => x.toFixed(4)).join(',')}`);
  console.log(`mariadb_instructions_per_row=${(perRow.reduce((a, b) => a + b, 0) / perRow.length).toFixed(4)}M`);
} finally {
  sqsServer.stop();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** A fresh MariaDB under callgrind (counting from the start; the bench zeroes the counters before each round). */
async function startProfiledMariadb(): Promise<{ port: number; process: ChildProcess; stop(): Promise<void> }> {
  const data = join(dir, 'data');
  execFileSync('mariadb-install-db', ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db'], { env, stdio: 'ignore' });
  const port = await freePort();
  const options = [
    '--no-defaults', `--datadir=${data}`, `--port=${port}`, '--bind-address=127.0.0.1', `--socket=${join(dir, 'mysqld.sock')}`,
    `--user=${userInfo().username}`, '--skip-log-bin', '--innodb-buffer-pool-size=134217728',
    '--innodb-use-native-aio=0', // io_uring does not work under valgrind
  ];
  // 10.11.x releases that reserve address space for buffer pool resizing need the reservation bounded under valgrind.
  const help = execFileSync('mariadbd', ['--no-defaults', '--verbose', '--help'], { env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (help.includes('innodb-buffer-pool-size-max')) options.push('--innodb-buffer-pool-size-max=268435456');
  const child = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'callgrind.%p.out')}`, 'mariadbd', ...options], { env, stdio: 'ignore' });
  await waitFor(async () => {
    const conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' });
    await conn.end();
    return true;
  }, `mariadbd under valgrind on port ${port}`, 180_000);
  return {
    port,
    process: child,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

function callgrind(command: string): void {
  execFileSync('callgrind_control', [command, String(server.process.pid)], { env, stdio: 'ignore' });
}

/** Dumps the counters and returns the instructions counted since they were last zeroed. */
function dumpedInstructions(): number {
  const before = new Set(readdirSync(dir));
  callgrind('-d');
  const dump = readdirSync(dir).filter((f) => f.startsWith('callgrind.') && !before.has(f))
    .sort((a, b) => statSync(join(dir, b)).mtimeMs - statSync(join(dir, a)).mtimeMs)[0];
  if (!dump) throw new Error('callgrind wrote no dump');
  const total = /^summary: (\d+)/m.exec(readFileSync(join(dir, dump), 'utf8'))?.[1];
  if (!total) throw new Error(`no summary in ${dump}`);
  return Number(total);
}
