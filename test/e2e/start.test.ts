/** `npm start` as a process: ready line and console URL, a served route, clean Ctrl-C; and a clear exit without MySQL. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from '../helpers/ports.ts';

const START = fileURLToPath(new URL('../../lib/dev/start.ts', import.meta.url));

function startProcess(env: Record<string, string>) {
  return spawn(process.execPath, ['--import', 'tsx', START], {
    env: { ...process.env, PORT: '0', AWS_ENDPOINT_URL: inject('awsEndpoint'), ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('npm start', () => {
  it('prints the listening line when ready, serves the API, and exits 0 on SIGINT', async () => {
    const child = startProcess({ DATABASE_URL: process.env.DATABASE_URL ?? '' });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const lines = createInterface({ input: child.stdout! });
    let url: string | undefined;
    let consoleLine: string | undefined;
    for await (const line of lines) {
      if (line.startsWith('admin console: ')) consoleLine = line;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match) {
        url = match[1];
        break;
      }
    }
    expect(url, `npm start ended before its listening line; its stderr:\n${stderr}`).toBeDefined();
    expect(consoleLine).toContain(`${url}/console/`);
    expect((await fetch(`${url}/api/ai/jobs`)).status).toBe(401);
    child.kill('SIGINT');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  }, 60_000);

  it('says how to get a MySQL server and exits non-zero when none answers', async () => {
    const child = startProcess({ DATABASE_URL: `mysql://root@127.0.0.1:${await freePort()}/ai_jobs` });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr).toMatch(/Cannot reach MySQL at 127\.0\.0\.1:\d+/);
    expect(stderr).toContain('docker compose up -d mysql');
  }, 60_000);
});
