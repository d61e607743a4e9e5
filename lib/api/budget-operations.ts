/**
 * The budget routes (docs/budgets.md "Where people see it"): admins read provider limits and spending caps with
 * their use now and change them; a user reads their own spend against their caps. Every read and write goes
 * through the capacity and spend repositories (lib/capacity/limits-repository.ts, lib/spend/caps-repository.ts),
 * which validate again: what a schema cannot know — a model no route calls, a job type not registered, a user as
 * the platform's subject — is a 400 VALIDATION_FAILED naming the field, like a malformed value, and nothing is
 * written. A cap lowered below the spend counted stops new admissions at once (creation and reservations read
 * the caps every time) and never touches a running job: its reservation settles as usual.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { routingFromEnv, routedModels } from '../ai/routing-table.ts';
import type { ModelRoute } from '../ai/types.ts';
import { InvalidLimitError, UnknownModelError } from '../capacity/errors.ts';
import { providerLimitsFromEnv, type ProviderLimitsConfig } from '../capacity/limits-config.ts';
import { endCooldown, readModelCapacity, resetModelLimits, setModelLimits, type ModelCapacityView } from '../capacity/limits-repository.ts';
import { spendCapDefaultsFromEnv, type SpendCapDefaults, type SpendScope } from '../spend/caps.ts';
import { listSpendCaps } from '../spend/caps-list.ts';
import { readPlatformSpend, readSpendUse, readUserSpend, removeSpendCap, setSpendCap, type SpendUse } from '../spend/caps-repository.ts';
import type { JobDefinitionRegistry } from '../jobs/registry.ts';
import {
  setModelLimitsBodySchema, setSpendCapBodySchema,
  type BudgetsQuery, type BudgetsResponse, type ModelCapacity, type ModelQuery, type SpendCapQuery, type SpendUseView,
} from './budget-schemas.ts';
import { RequestValidationError } from './http-errors.ts';
import { json, jsonBody, parseField, type ApiResult, type FieldLocation } from './http.ts';
import type { OperationContext } from './router.ts';
import type { ApiRoute } from './routes.ts';

/** What the budget routes read: the stage's limits and caps configuration and the models routes call. */
export interface BudgetSettings {
  limits: ProviderLimitsConfig;
  routes: readonly ModelRoute[];
  caps: SpendCapDefaults;
}

/** The settings from the environment, as the consumers read them (PROVIDER_LIMITS, SPEND_CAP_*_USD, the routing). */
export function budgetSettingsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): BudgetSettings {
  return { limits: providerLimitsFromEnv(env), routes: routedModels(routingFromEnv(env).routing), caps: spendCapDefaultsFromEnv(env) };
}

/** What the admin budget operations need from the admin API's dependencies. */
export interface BudgetDeps {
  registry: JobDefinitionRegistry;
  now(): Date;
  /** Default: {@link budgetSettingsFromEnv}, read once. */
  budgets?: BudgetSettings;
  logger: Pick<Logger, 'info'>;
}

type Ctx = OperationContext<BudgetDeps, ApiRoute>;

let fromEnv: BudgetSettings | undefined;
const settingsOf = (deps: BudgetDeps): BudgetSettings => deps.budgets ?? (fromEnv ??= budgetSettingsFromEnv());
const repoOf = (deps: BudgetDeps) => ({ config: settingsOf(deps).limits, routes: settingsOf(deps).routes });
const jobTypesOf = (deps: BudgetDeps) => deps.registry.getAll().map((d) => d.jobType);

/** `GET /admin-api/ai/budgets[?userId=]`. */
async function adminBudgets({ query, deps }: Ctx): Promise<ApiResult> {
  const settings = settingsOf(deps);
  const { userId } = query as BudgetsQuery;
  const [models, spend, caps, user] = await Promise.all([
    readModelCapacity(repoOf(deps)),
    readPlatformSpend(jobTypesOf(deps), { defaults: settings.caps }),
    listSpendCaps(settings.caps),
    userId === undefined ? Promise.resolve(undefined) : readUserSpend(userId, { defaults: settings.caps }),
  ]);
  const body: BudgetsResponse = {
    generatedAt: deps.now().toISOString(),
    models: models.map(toModelCapacity),
    spend: spend.map(toSpendUseView),
    caps: {
      defaults: caps.defaults,
      overrides: caps.overrides.map((o) => ({ ...o, updatedAt: o.updatedAt.toISOString() })),
      truncated: caps.truncated,
    },
    ...(user ? { user: { userId: userId!, spend: user.map(toSpendUseView) } } : {}),
  };
  return json(200, body);
}

/** `PUT /admin-api/ai/budgets/limits`: 200 with the model's limits and use after the change. */
async function adminSetModelLimits({ event, caller, deps }: Ctx): Promise<ApiResult> {
  const { provider, model, ...changes } = parseField(setModelLimitsBodySchema, jsonBody(event), 'body');
  const route = { provider, model };
  await asValidation('body', () => setModelLimits(repoOf(deps), route, changes, `admin:${caller.userId}`));
  deps.logger.info('admin set model limits', { adminId: caller.userId, ...route, ...changes });
  return json(200, await modelView(deps, route));
}

/** `DELETE /admin-api/ai/budgets/limits?provider=&model=`: back to the configuration. */
async function adminResetModelLimits({ query, caller, deps }: Ctx): Promise<ApiResult> {
  const route = query as ModelQuery;
  await asValidation('query', () => resetModelLimits(repoOf(deps), route, `admin:${caller.userId}`));
  deps.logger.info('admin reset model limits', { adminId: caller.userId, ...route });
  return json(200, await modelView(deps, route));
}

/** `DELETE /admin-api/ai/budgets/cooldowns?provider=&model=`: the cooldown ends now, at the full rate. */
async function adminEndCooldown({ query, caller, deps }: Ctx): Promise<ApiResult> {
  const route = query as ModelQuery;
  await asValidation('query', () => endCooldown(repoOf(deps), route, `admin:${caller.userId}`));
  deps.logger.info('admin ended cooldown', { adminId: caller.userId, ...route });
  return json(200, await modelView(deps, route));
}

/** `PUT /admin-api/ai/budgets/caps`: 200 with the cap's use in its current period. */
async function adminSetSpendCap({ event, caller, deps }: Ctx): Promise<ApiResult> {
  const body = parseField(setSpendCapBodySchema, jsonBody(event), 'body');
  const cap = await asValidation('body', () => setSpendCap(body.scope, body.subject, body.capUsd, `admin:${caller.userId}`, { jobTypes: jobTypesOf(deps) }));
  deps.logger.info('admin set spending cap', { adminId: caller.userId, ...cap });
  return json(200, await capView(deps, cap.scope, cap.subject));
}

/** `DELETE /admin-api/ai/budgets/caps?scope=&subject=`: 200 with whether one was removed and the cap that applies now. */
async function adminResetSpendCap({ query, caller, deps }: Ctx): Promise<ApiResult> {
  const { scope, subject } = query as SpendCapQuery;
  const removed = await asValidation('query', () => removeSpendCap(scope, subject, { jobTypes: jobTypesOf(deps) }));
  deps.logger.info('admin removed spending cap', { adminId: caller.userId, scope, subject, removed });
  return json(200, { removed, use: await capView(deps, scope, subject) });
}

/** The admin budget operations, one per action. */
export const ADMIN_BUDGET_OPERATIONS = {
  adminBudgets, adminSetModelLimits, adminResetModelLimits, adminEndCooldown, adminSetSpendCap, adminResetSpendCap,
} as const satisfies Record<string, (ctx: Ctx) => Promise<ApiResult>>;

/** `GET /api/ai/spend`: the caller's day and month against the caps that apply to them. */
export async function userSpend(caller: { userId: string }, caps: SpendCapDefaults): Promise<ApiResult> {
  const spend = await readUserSpend(caller.userId, { defaults: caps });
  return json(200, { spend: spend.map(toSpendUseView) });
}

async function modelView(deps: BudgetDeps, route: ModelRoute): Promise<ModelCapacity> {
  const views = await readModelCapacity(repoOf(deps));
  return toModelCapacity(views.find((v) => v.provider === route.provider && v.model === route.model)!);
}

async function capView(deps: BudgetDeps, scope: SpendScope, subject: string): Promise<SpendUseView> {
  const [use] = await readSpendUse([{ scope, subject }], { defaults: settingsOf(deps).caps });
  return toSpendUseView(use!);
}

/**
 * Runs a repository write, turning its refusals into 400 VALIDATION_FAILED naming the field where it was sent
 * (`body.rpm`, `query.model`). @throws RequestValidationError
 */
async function asValidation<T>(location: FieldLocation, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof UnknownModelError) {
      throw new RequestValidationError([{ path: `${location}.model`, message: `is not called by any route: ${err.provider}/${err.model}` }]);
    }
    if (err instanceof InvalidLimitError) {
      throw new RequestValidationError([{ path: `${location}.${err.field}`, message: err.message.slice(err.field.length + 1) }]);
    }
    throw err;
  }
}

/** The API's view of a model's limits and use. */
export function toModelCapacity(v: ModelCapacityView): ModelCapacity {
  return {
    provider: v.provider, model: v.model, rpm: v.rpm, tpm: v.tpm, maxInFlight: v.maxInFlight, maxOutputTokens: v.maxOutputTokens,
    source: v.source, updatedBy: v.updatedBy, updatedAt: v.updatedAt?.toISOString() ?? null, inFlight: v.inFlight,
    cooldownUntil: v.cooldownUntil?.toISOString() ?? null, admittedPerMille: v.rateFactor,
    window: { start: v.window.start.toISOString(), requests: v.window.requests, tokens: v.window.tokens, rpm: v.window.rpm, tpm: v.window.tpm },
  };
}

/** The API's view of a cap's use: with what counts against it (settled + reserved) and whether it is reached. */
export function toSpendUseView(u: SpendUse): SpendUseView {
  const used = units(u.settledUsd) + units(u.reservedUsd);
  return {
    scope: u.scope, subject: u.subject, periodStart: u.periodStart, resetsAt: u.periodEnd.toISOString(),
    capUsd: u.capUsd, capSource: u.capSource, settledUsd: u.settledUsd, reservedUsd: u.reservedUsd,
    usedUsd: fromUnits(used), reached: u.capUsd !== null && used >= units(u.capUsd),
  };
}

/** USD with 8 decimals ↔ integer units of 1e-8 (exact sums). */
function units(usd: string): bigint {
  const [whole = '0', fraction = ''] = usd.split('.');
  return BigInt(whole) * 100_000_000n + BigInt(fraction.padEnd(8, '0').slice(0, 8));
}

function fromUnits(n: bigint): string {
  return `${n / 100_000_000n}.${(n % 100_000_000n).toString().padStart(8, '0')}`;
}
