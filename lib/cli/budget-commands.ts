/**
 * The CLI's budget commands (docs/budgets.md): admins see provider limits, minute windows, cooldowns and spend
 * against caps, and change limits and caps; a user sees their own spend. Shapes are checked here (a clear usage
 * error before any request); bounds, models and job types by the API, whose 400 names the field.
 */
import type { ApiClient } from './api-client.ts';
import { UsageError, type Command, type Flags } from './commands.ts';
import { formatBudgets, formatSpend, type BudgetsView, type SpendView } from './budget-format.ts';

const SCOPES = ['user_day', 'user_month', 'job_type_day', 'platform_day'];
const LIMIT_FLAGS = [['rpm', 'rpm'], ['tpm', 'tpm'], ['max-in-flight', 'maxInFlight']] as const;

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
const out = (text: string) => process.stdout.write(`${text}\n`);

/** `provider/model` (the model may contain `/`). */
function modelArg(value: string | undefined): { provider: string; model: string } {
  const at = value?.indexOf('/') ?? -1;
  if (!value || at <= 0 || at === value.length - 1) throw new UsageError('give the model as provider/model, e.g. deepseek/deepseek-chat');
  return { provider: value.slice(0, at), model: value.slice(at + 1) };
}

function wholeNumber(flags: Flags, flag: string): number | undefined {
  const raw = flags[flag];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw new UsageError(`--${flag} must be a whole number`);
  return Number(raw);
}

function scopeArg(value: string | undefined): string {
  if (!value || !SCOPES.includes(value)) throw new UsageError(`the scope is one of ${SCOPES.join(', ')}`);
  return value;
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new UsageError(`${name} is required`);
  return value;
}

const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

export const BUDGET_COMMANDS: Record<string, Command> = {
  budgets: {
    usage: 'budgets [--user U] [--json]   (admin) limits, minute windows, cooldowns, spend against caps (a user\'s too)',
    async run(client: ApiClient, _args, f) {
      const user = typeof f.user === 'string' ? `?${query({ userId: f.user })}` : '';
      const view = await client.request<BudgetsView>('GET', `admin-api/ai/budgets${user}`);
      if (f.json) print(view);
      else out(formatBudgets(view));
      return 0;
    },
  },
  'set-limit': {
    usage: 'set-limit <provider/model> [--rpm N] [--tpm N] [--max-in-flight N]   (admin) stands until reset-limit',
    async run(client, [model], f) {
      const route = modelArg(model);
      const changes = Object.fromEntries(LIMIT_FLAGS.map(([flag, field]) => [field, wholeNumber(f, flag)]).filter(([, v]) => v !== undefined));
      if (Object.keys(changes).length === 0) throw new UsageError('give at least one of --rpm, --tpm, --max-in-flight');
      print(await client.request('PUT', 'admin-api/ai/budgets/limits', { ...route, ...changes }));
      return 0;
    },
  },
  'reset-limit': {
    usage: 'reset-limit <provider/model>   (admin) back to the stage\'s configuration',
    run: async (client, [model]) => (print(await client.request('DELETE', `admin-api/ai/budgets/limits?${query(modelArg(model))}`)), 0),
  },
  'end-cooldown': {
    usage: 'end-cooldown <provider/model>   (admin) the model takes calls again now, at its full rate',
    run: async (client, [model]) => (print(await client.request('DELETE', `admin-api/ai/budgets/cooldowns?${query(modelArg(model))}`)), 0),
  },
  'set-cap': {
    usage: `set-cap <${SCOPES.join('|')}> <user id | job type | *> <USD>   (admin) e.g. set-cap user_day alice 5`,
    async run(client, [scope, subject, usd]) {
      const body = { scope: scopeArg(scope), subject: required(subject, 'the subject (a user id, a job type or *)'), capUsd: required(usd, 'the cap in USD') };
      if (!/^\d+(\.\d+)?$/.test(body.capUsd)) throw new UsageError('the cap is a number of US dollars, e.g. 5 or 0.25');
      print(await client.request('PUT', 'admin-api/ai/budgets/caps', body));
      return 0;
    },
  },
  'reset-cap': {
    usage: 'reset-cap <scope> <user id | job type | *>   (admin) a user or job type falls back to the default',
    async run(client, [scope, subject]) {
      const params = { scope: scopeArg(scope), subject: required(subject, 'the subject (a user id, a job type or *)') };
      print(await client.request('DELETE', `admin-api/ai/budgets/caps?${query(params)}`));
      return 0;
    },
  },
  spend: {
    usage: 'spend [--json]   your spend today and this month against your caps, and when each resets',
    async run(client, _args, f) {
      const view = await client.request<{ spend: SpendView[] }>('GET', 'api/ai/spend');
      if (f.json) print(view);
      else out(formatSpend(view.spend));
      return 0;
    },
  },
};
