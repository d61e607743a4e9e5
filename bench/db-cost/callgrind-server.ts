/**
 * A private database server run under Valgrind's callgrind, for bench/db-cost.ts: instructions executed are a
 * count, not a time, so they do not drift with the machine's load the way CPU milliseconds do.
 *
 * Each server starts in a fresh temporary data directory on a free port, with instrumentation off
 * (`--instr-atstart=no`: Valgrind still runs it, about 5× slower, but counts nothing). A measured window is
 * `zero()` … `dump()`: instrumentation on, counters zeroed, then one dump per server process whose `totals:`
 * (Ir, instructions executed) are summed. PostgreSQL forks a process per connection: the server runs with
 * `--trace-children=yes` and every process of its tree is switched and dumped (a backend forked later inherits
 * the postmaster's state). Processes that exit during a window write their own final dump, which counts too.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, open, readdir, readFile, rm, chown, chmod, type FileHandle } from 'node:fs/promises';
import { readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { portOpen } from '../peers/config.ts';
import { processTree } from '../peers/cpu.ts';

const run = promisify(execFile);

export interface CallgrindServer {
  port: number;
  /** Starts a window: instrumentation on and counters zeroed in every process of the server. */
  zero(): Promise<void>;
  /** Ends a window: the instructions executed since {@link zero}, summed over the server's processes. */
  dump(): Promise<{ instructions: number; files: string[] }>;
  /** Self cost per function of the window's largest dump (callgrind_annotate), the top `n`. */
  topFunctions(files: string[], n: number): Promise<string[]>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    }).on('error', reject);
  });
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await portOpen('127.0.0.1', port))) {
    if (child.exitCode !== null) throw new Error(`the server under callgrind exited (${child.exitCode}) before listening`);
    if (Date.now() > deadline) throw new Error(`the server under callgrind did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const VALGRIND = ['--tool=callgrind', '--instr-atstart=no'];

/** The processes of `root`'s tree that Valgrind runs (its tool binary is their executable). */
function valgrindPids(root: number): number[] {
  return processTree(root).filter((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/exe`).includes('callgrind');
    } catch {
      return false;
    }
  });
}

function controller(dir: string, child: ChildProcess, port: number, stopServer: () => Promise<void>): CallgrindServer {
  let windowFiles = new Set<string>();
  const control = async (args: string[]) => {
    const pids = valgrindPids(child.pid!);
    if (pids.length > 0) await run('callgrind_control', [...args, ...pids.map(String)]);
  };
  return {
    port,
    async zero() {
      await control(['--instr=on']);
      await control(['--zero']);
      windowFiles = new Set(await readdir(dir));
    },
    async dump() {
      await control(['--dump=window']);
      await control(['--instr=off']);
      const files = (await readdir(dir)).filter((f) => f.startsWith('cg.out.') && !windowFiles.has(f)).map((f) => join(dir, f));
      let instructions = 0;
      for (const f of files) {
        const text = await readFile(f, 'utf8');
        instructions += Number(/^totals:\s*(\d+)/m.exec(text)?.[1] ?? /^summary:\s*(\d+)/m.exec(text)?.[1] ?? 0);
      }
      return { instructions, files };
    },
    async topFunctions(files, n) {
      const sizes = await Promise.all(files.map(async (f) => ({ f, text: await readFile(f, 'utf8') })));
      const largest = sizes.map(({ f, text }) => ({ f, ir: Number(/^totals:\s*(\d+)/m.exec(text)?.[1] ?? 0) })).sort((a, b) => b.ir - a.ir)[0];
      if (!largest) return [];
      const { stdout } = await run('callgrind_annotate', ['--inclusive=no', `--threshold=100`, largest.f], { maxBuffer: 64 << 20 });
      return stdout.split('\n').filter((l) => /^\s*[\d,]+ \(\s*[\d.]+%\)\s+\S/.test(l)).slice(1, n + 1).map((l) => l.trim().replace(/\s+/g, ' '));
    },
    stop: stopServer,
  };
}

/** MariaDB (`mariadbd`, `mariadb-install-db`) with the settings of the tests' server. */
export async function startMariadbUnderCallgrind(): Promise<CallgrindServer> {
  const dir = await mkdtemp(join(tmpdir(), 'db-cost-mariadb-'));
  await run('mariadb-install-db', ['--no-defaults', `--datadir=${dir}/data`, '--auth-root-authentication-method=normal']);
  const port = await freePort();
  let log: FileHandle;
  const child = spawn('valgrind', [...VALGRIND, `--callgrind-out-file=${dir}/cg.out.%p`, 'mariadbd', '--no-defaults', `--datadir=${dir}/data`,
    `--port=${port}`, '--bind-address=127.0.0.1', `--socket=${dir}/sock`, `--pid-file=${dir}/pid`, '--skip-grant-tables', '--user=root',
    '--innodb-use-native-aio=0', '--innodb-buffer-pool-size=128M', '--innodb-buffer-pool-size-max=256M', '--default-time-zone=+00:00',
    '--sql-mode=ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'],
  { stdio: ['ignore', 'ignore', (log = await open(`${dir}/server.log`, 'w')).fd] });
  await log.close(); // the child holds its own copy
  await waitForPort(port, child);
  return controller(dir, child, port, async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  });
}

/**
 * PostgreSQL (`initdb`, `postgres` on PATH) as the `postgres` system user when this process is root (the server
 * refuses to run as root), trust authentication, user `postgres`.
 */
export async function startPostgresUnderCallgrind(): Promise<CallgrindServer> {
  const dir = await mkdtemp(join(tmpdir(), 'db-cost-postgres-'));
  const asRoot = process.getuid?.() === 0;
  const as = (cmd: string[]) => (asRoot ? ['runuser', ['-u', 'postgres', '--', ...cmd]] : [cmd[0]!, cmd.slice(1)]) as [string, string[]];
  if (asRoot) {
    await chmod(dir, 0o755);
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout), Number(gid));
  }
  await run(...as(['initdb', '-D', `${dir}/data`, '-U', 'postgres', '--auth=trust']));
  const port = await freePort();
  const child = spawn(...as(['valgrind', ...VALGRIND, '--trace-children=yes', `--callgrind-out-file=${dir}/cg.out.%p`,
    'postgres', '-D', `${dir}/data`, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1']), { stdio: 'ignore' });
  await waitForPort(port, child);
  return controller(dir, child, port, async () => {
    const [postmaster] = valgrindPids(child.pid!);
    if (postmaster) process.kill(postmaster, 'SIGINT'); // fast shutdown
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  });
}
