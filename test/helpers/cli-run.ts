/** Runs the CLI in this process against a runtime, capturing what it writes (test/e2e CLI suites). */
import { main } from '../../lib/cli/main.ts';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** `npm run cli -- <args> --api-url <url> --token <token>`, with stdout and stderr captured. */
export async function runCli(url: string, args: string[], token: string): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const original = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  process.stdout.write = ((chunk: unknown) => out.push(String(chunk)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((chunk: unknown) => err.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    const code = await main([...args, '--api-url', url, '--token', token]);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = original.out;
    process.stderr.write = original.err;
  }
}
