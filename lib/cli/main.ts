/**
 * `npm run cli -- <command>`: the engine's HTTP API from a terminal, against the local runtime or a deployed
 * stage (`--api-url`, `--token`, or AI_JOBS_API_URL / AI_JOBS_TOKEN).
 */
import { parseArgs } from 'node:util';
import { ApiClient, ApiRequestError } from './api-client.ts';
import { COMMANDS as JOB_COMMANDS, UsageError } from './commands.ts';
import { BUDGET_COMMANDS } from './budget-commands.ts';
import { WatchJobError } from '../client/watch-job.ts';

const COMMANDS = { ...JOB_COMMANDS, ...BUDGET_COMMANDS };

/** Flags that take a value (parseArgs must know, or `--count 3` becomes a boolean and a positional). */
const STRING_FLAGS = [
  'text', 'file', 'input-file', 'concept', 'count', 'difficulty', 'max-cards', 'idempotency-key', 'status', 'type', 'limit', 'cursor',
  'from', 'to', 'model', 'user', 'top', 'rpm', 'tpm', 'max-in-flight',
];

function usage(): string {
  return ['usage: npm run cli -- <command> [--api-url URL] [--token JWT]', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${usage()}\n`);
    return 2;
  }
  return run(parsed.values, parsed.positionals);
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv, allowPositionals: true, strict: true,
    options: {
      'api-url': { type: 'string' }, token: { type: 'string' }, watch: { type: 'boolean' }, help: { type: 'boolean' }, 'by-user': { type: 'boolean' }, json: { type: 'boolean' },
      ...Object.fromEntries(STRING_FLAGS.map((name) => [name, { type: 'string' as const }])),
    },
  });
}

async function run(values: ReturnType<typeof parse>['values'], positionals: string[]): Promise<number> {
  const [name, ...rest] = positionals;
  const command = name ? COMMANDS[name] : undefined;
  if (!command || values.help) {
    process.stderr.write(`${usage()}\n`);
    return command || values.help ? 0 : 2;
  }
  const client = new ApiClient({
    baseUrl: String(values['api-url'] ?? process.env.AI_JOBS_API_URL ?? 'http://127.0.0.1:3000'),
    token: (values.token as string | undefined) ?? process.env.AI_JOBS_TOKEN,
  });
  try {
    return await command.run(client, rest, values);
  } catch (err) {
    if (err instanceof ApiRequestError || err instanceof WatchJobError) process.stderr.write(`error ${err.code} (HTTP ${err.status}): ${err.message}\n`);
    else if (err instanceof UsageError) process.stderr.write(`${err.message}\n${usage()}\n`);
    else throw err;
    return err instanceof UsageError ? 2 : 1;
  }
}
