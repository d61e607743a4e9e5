/**
 * What the budget routes take and return (docs/budgets.md "Where people see it"): provider limits with their use
 * now, spending caps with the spend counted against them, and the changes admins make. Requests are strict zod
 * objects (an unknown field is a 400); their bounds are the repositories' own (lib/capacity/limits-config.ts
 * LIMIT_BOUNDS, lib/spend/caps.ts MAX_CAP_USD), which validate again and also refuse what a schema cannot know: a
 * model no route calls, a job type not registered. Responses register as OpenAPI components.
 */
import * as z from 'zod';
import { LIMIT_BOUNDS } from '../capacity/limits-config.ts';
import { MAX_CAP_USD, SPEND_SCOPES } from '../spend/caps.ts';
import { responseSchemas } from './response-schemas.ts';

const timestamp = z.iso.datetime();
const count = z.number().int().min(0);
const usd = z.string().regex(/^\d+\.\d{8}$/).describe('Decimal USD, 8 places');
const scope = z.enum(SPEND_SCOPES).describe('`user_day`, `user_month` (subject: a user id), `job_type_day` (a job type), `platform_day` (`*` only)');
const provider = z.string().min(1).max(64).describe('A provider the routing table names, e.g. `deepseek`');
const model = z.string().min(1).max(128).describe('A model a route calls, e.g. `deepseek-chat`');
const subject = z.string().min(1).max(64).describe('A user id, a job type, or `*` for the scope\'s default');

const limit = (field: keyof typeof LIMIT_BOUNDS, what: string) =>
  z.number().int().min(LIMIT_BOUNDS[field].min).max(LIMIT_BOUNDS[field].max).optional()
    .describe(`${what}, ${LIMIT_BOUNDS[field].min}-${LIMIT_BOUNDS[field].max}`);

/** `PUT /admin-api/ai/budgets/limits`: the fields given change, the others keep their value. */
export const setModelLimitsBodySchema = z.strictObject({
  provider,
  model,
  rpm: limit('rpm', 'Requests per minute window'),
  tpm: limit('tpm', 'Tokens per minute window'),
  maxInFlight: limit('maxInFlight', 'Calls in flight at once, over every consumer'),
}).refine((b) => b.rpm !== undefined || b.tpm !== undefined || b.maxInFlight !== undefined, {
  message: 'name at least one of rpm, tpm, maxInFlight', path: ['rpm'],
});

/** `DELETE /admin-api/ai/budgets/limits` and `/cooldowns`: the model. */
export const modelQuerySchema = z.strictObject({ provider, model });

/** `PUT /admin-api/ai/budgets/caps`. */
export const setSpendCapBodySchema = z.strictObject({
  scope,
  subject,
  capUsd: z.union([
    z.string().regex(/^\d+(\.\d{1,8})?$/, 'must be a decimal number of US dollars with at most 8 decimals'),
    z.number().positive().max(MAX_CAP_USD),
  ]).describe(`The cap in US dollars, more than 0 and at most ${MAX_CAP_USD}, at most 8 decimals (a decimal string keeps it exact)`),
});

/** `DELETE /admin-api/ai/budgets/caps`. */
export const spendCapQuerySchema = z.strictObject({ scope, subject });

/** `GET /admin-api/ai/budgets`. */
export const budgetsQuerySchema = z.strictObject({
  userId: z.string().min(1).max(64).optional().describe('Also show this user\'s spend today and this month against their caps'),
});

export const modelCapacitySchema = z
  .strictObject({
    provider: z.string(),
    model: z.string(),
    rpm: count, tpm: count, maxInFlight: count,
    maxOutputTokens: count.describe('`max_tokens` sent with every call (configuration only)'),
    source: z.enum(['config', 'admin']).describe('`admin`: set at run time, stands until reset; `config`: follows the stage\'s configuration'),
    updatedBy: z.string().nullable(),
    updatedAt: timestamp.nullable(),
    inFlight: count.describe('Calls between reservation and settlement now, over every consumer'),
    cooldownUntil: timestamp.nullable().describe('When the model\'s cooldown after a 429 ends; null when it is not cooling down'),
    admittedPerMille: z.number().int().min(0).max(1000).describe('Share of the limits admitted now, per mille (below 1000 during and after a cooldown, recovering 100 a minute)'),
    window: z.strictObject({
      start: timestamp.describe('The current minute window (the database\'s UTC minute)'),
      requests: count, tokens: count,
      rpm: count.describe('Requests admitted in this window (the limit × the admitted share)'),
      tpm: count.describe('Tokens admitted in this window'),
    }),
  })
  .register(responseSchemas, { id: 'ModelCapacity', description: 'A routed model\'s limits and their use now' });

export const spendUseSchema = z
  .strictObject({
    scope,
    subject: z.string(),
    periodStart: z.string().describe('First UTC day of the period, YYYY-MM-DD'),
    resetsAt: timestamp.describe('When the period ends and the spend counts from zero again (UTC midnight, or the first of the next month)'),
    capUsd: usd.nullable().describe('The cap that applies; null when none does'),
    capSource: z.enum(['subject', 'default', 'config']).nullable()
      .describe('`subject`: an admin\'s cap for this user or job type; `default`: an admin\'s default for the scope; `config`: the stage\'s default'),
    settledUsd: usd.describe('Cost of the calls settled in the period'),
    reservedUsd: usd.describe('Maximum cost of the calls running now'),
    usedUsd: usd.describe('settled + reserved: what counts against the cap'),
    reached: z.boolean().describe('usedUsd ≥ capUsd: new jobs the cap applies to are refused (429 SPEND_LIMIT_REACHED) until resetsAt'),
  })
  .register(responseSchemas, { id: 'SpendUse', description: 'A spending cap and the spend counted against it in its current UTC period' });

const scopeDefault = z.strictObject({
  scope,
  capUsd: usd.nullable(),
  source: z.enum(['default', 'config']).nullable().describe('`default`: an admin\'s; `config`: the stage\'s (SPEND_CAP_*_USD); null: no default'),
  configuredUsd: usd.nullable().describe('The stage\'s configured default, whatever an admin set over it'),
});

export const budgetsResponseSchema = z
  .strictObject({
    generatedAt: timestamp,
    models: z.array(modelCapacitySchema).describe('Every model a route calls'),
    spend: z.array(spendUseSchema).describe('The platform\'s day, then each registered job type\'s day'),
    caps: z.strictObject({
      defaults: z.array(scopeDefault),
      overrides: z.array(z.strictObject({ scope, subject: z.string(), capUsd: usd, updatedBy: z.string().nullable(), updatedAt: timestamp }))
        .describe('Caps for one user or job type, by scope and subject (at most 200)'),
      truncated: z.boolean().describe('More overrides exist than are listed'),
    }),
    user: z.strictObject({ userId: z.string(), spend: z.array(spendUseSchema) }).optional().describe('With `userId`: that user\'s day and month'),
  })
  .register(responseSchemas, { id: 'BudgetsResponse' });

export const spendCapResetSchema = z
  .strictObject({ removed: z.boolean().describe('False when no such cap was set'), use: spendUseSchema.describe('The cap that applies now') })
  .register(responseSchemas, { id: 'SpendCapReset' });

export const userSpendResponseSchema = z
  .strictObject({
    spend: z.array(spendUseSchema).describe('`user_day` and `user_month`. They apply to jobs on the platform\'s key; to jobs on your own key only where an admin set a cap for you (capSource `subject`)'),
  })
  .register(responseSchemas, { id: 'UserSpendResponse' });

export type ModelCapacity = z.output<typeof modelCapacitySchema>;
export type SpendUseView = z.output<typeof spendUseSchema>;
export type BudgetsResponse = z.output<typeof budgetsResponseSchema>;
export type ModelQuery = z.output<typeof modelQuerySchema>;
export type SpendCapQuery = z.output<typeof spendCapQuerySchema>;
export type BudgetsQuery = z.output<typeof budgetsQuerySchema>;
