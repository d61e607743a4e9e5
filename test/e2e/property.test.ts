/**
 * Property-based suite over every route of lib/api/routes.ts (user, admin and stream routes), driven by docs/openapi.json, against the local
 * runtime over HTTP: seeded batches of well-formed and malformed requests (paths, queries, headers, bodies,
 * bytes) with good, forged, expired, near-miss-admin and ill-formed tokens. For every response: its status and
 * body are documented for the route (JSON Schema, ajv), no 5xx but a documented 503, no stack, SQL, file path
 * or other user's job in it, and admin routes succeed for the admin only. Then a normal job still succeeds.
 * Reproduce a failure with PROPERTY_SEED=<seed printed by fast-check>; PROPERTY_RUNS changes the batch count (500
 * batches of 12: 6,000 requests, ~16 s alone). Every batch runs whatever the machine's load: a slow machine makes the
 * run longer, never smaller.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { signLocalToken } from '../../lib/api/local-jwt.ts';
import { ADMIN_ROUTES, STREAM_ROUTES, USER_ROUTES } from '../../lib/api/routes.ts';
import { startE2e, type E2e } from '../helpers/e2e-runtime.ts';
import { RAW_PIECES, anyText, brokenValue, encodeComponent, validValue, type JsonSchema } from '../helpers/openapi-arbitraries.ts';

type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, JsonSchema> } };
type Operation = {
  operationId: string; parameters?: { name: string; in: string; schema: JsonSchema }[];
  requestBody?: { content: { 'application/json': { schema: JsonSchema } } };
  responses: Record<string, { content?: { 'application/json': { schema: JsonSchema } } }>;
};
interface Op { method: string; path: string; op: Operation; admin: boolean }
interface Caller { name: string; token?: string; sub?: string; admin: boolean }
/** A generated request; `op` and `caller` are names (short counterexamples), resolved through OP_BY_ID / callers. */
interface Req { op: string; caller: string; method: string; url: string; headers: Record<string, string>; body?: string | Uint8Array }

const DOC = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as Doc;
const OPS: Op[] = Object.entries(DOC.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op, admin: path.startsWith('/admin-api/') })));
const OP_BY_ID = new Map(OPS.map((o) => [o.op.operationId, o]));
const SEED = Number(process.env.PROPERTY_SEED ?? 20261201);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 500);
const BATCH = 12;

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
ajv.addSchema({ $id: 'openapi.json', components: DOC.components });
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorFor(schema: JsonSchema) {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (!v) validators.set(key, (v = ajv.compile(JSON.parse(key.replaceAll('"#/components/', '"openapi.json#/components/')) as object)));
  return v;
}

/** What no response may carry: stacks, SQL and driver detail, file paths. */
const LEAKS = [/\n\s+at\s/, /node_modules/, /\/work\//, /\.ts:\d+/, /\bSELECT\b.*\bFROM\b/i, /\bINSERT INTO\b/i, /\bER_[A-Z_]+/, /sqlMessage|Prisma|mariadb/i];

let e: E2e;
let callers: Caller[];
/** Job id → owner, for the "no other user's data" check; grows with every 202 a create returns. */
const owners = new Map<string, string>();
const counts = new Map<string, number>();

beforeAll(async () => {
  e = await startE2e();
  const aud = { issuer: e.runtime.audience.issuer, audience: e.runtime.audience.audience };
  const sign = (sub: string, extra: Parameters<typeof signLocalToken>[1] extends infer C ? Partial<C> : never = {}) =>
    signLocalToken(e.runtime.jwtKey, { sub, ...aud, ...extra });
  callers = [
    { name: 'alice', sub: 'alice', token: await sign('alice'), admin: false },
    { name: 'bob', sub: 'bob', token: await sign('bob'), admin: false },
    { name: 'unicode', sub: 'ü\u0301 \u{1F600}\u202E', token: await sign('ü\u0301 \u{1F600}\u202E'), admin: false },
    { name: 'admin', sub: 'root', token: await sign('root', { admin: true }), admin: true },
    { name: 'near-miss admin', sub: 'mallory', token: await sign('mallory', { groups: ['team SUPER_ADMIN', 'not SUPER_ADMIN'] }), admin: false },
    { name: 'role elsewhere', sub: 'eve', token: await sign('eve', { extra: { roles: ['SUPER_ADMIN'], groups: 'SUPER_ADMIN' } }), admin: false },
    { name: 'lone surrogate sub', token: await sign('x\uD800'), admin: false },
    { name: 'expired', token: await sign('alice', { expiresIn: -60 }), admin: false },
    { name: 'other audience', token: await signLocalToken(e.runtime.jwtKey, { sub: 'alice', issuer: aud.issuer, audience: 'elsewhere' }), admin: false },
    { name: 'garbage', token: 'not.a.jwt', admin: false },
    { name: 'none', admin: false },
  ];
  for (const owner of ['alice', 'bob']) {
    const res = await e.api('POST', '/api/ai/feynman-evaluations', { token: callers.find((c) => c.sub === owner)!.token, body: { concept: 'Seed', explanation: 'A seed job.' } });
    owners.set(res.body.jobId, owner);
  }
}, 60_000);
afterAll(async () => e.stop());

/**
 * Valid values kept short where the schema's range would hold a request: a stream read with `wait` up to 20 s
 * holds it that long when nothing comes (test/e2e/stream.test.ts covers the long waits).
 */
const SHORT_VALUES: Record<string, fc.Arbitrary<unknown>> = { wait: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) }) };

/**
 * One request for `op`: path, query, headers and body, each well-formed or not. Built once per operation
 * (building arbitraries — `stringMatching` compiles its regex — cost more than sending the request); the
 * known job ids are read when a value is generated, so ids created during the run are used too.
 */
const ARBITRARIES = new Map<string, fc.Arbitrary<Req>>();
function requestFor(op: Op): fc.Arbitrary<Req> {
  let arbitrary = ARBITRARIES.get(op.op.operationId);
  if (!arbitrary) ARBITRARIES.set(op.op.operationId, (arbitrary = buildRequestFor(op)));
  return arbitrary;
}

function buildRequestFor(op: Op): fc.Arbitrary<Req> {
  const knownJobId = fc.nat().map((i) => {
    const ids = [...owners.keys()];
    return encodeURIComponent(ids[i % ids.length]!);
  });
  const jobId = fc.oneof(
    { weight: 3, arbitrary: knownJobId },
    { weight: 2, arbitrary: fc.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/) },
    { weight: 2, arbitrary: anyText(30).map(encodeComponent) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_PIECES) },
  );
  const queryParams = (op.op.parameters ?? []).filter((p) => p.in === 'query');
  const goodQuery = fc.record(Object.fromEntries(queryParams.map((p) => [p.name, SHORT_VALUES[p.name] ?? validValue(p.schema, DOC)])), { requiredKeys: [] });
  const query = fc.oneof(
    { weight: 3, arbitrary: goodQuery.map((q) => Object.entries(q).map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom('status', 'jobType', 'limit', 'cursor', 'userId', 'createdFrom', 'x', 'after', 'wait'), anyText(20)).map(([k, v]) => `${k}=${encodeComponent(v)}`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('limit', 'after', 'wait'), fc.constantFrom(...RAW_PIECES, '-1', '1e400', '2147483648', '99999999999999999999', '0x10', '1.5')).map(([k, p]) => `${k}=${p}`) },
    { weight: 3, arbitrary: fc.constant('') },
  );
  const schema = op.op.requestBody?.content['application/json'].schema;
  const json = (v: unknown) => JSON.stringify(v);
  const body: fc.Arbitrary<string | Uint8Array | undefined> = schema
    ? fc.oneof(
      { weight: 5, arbitrary: validValue(schema, DOC).map(json) },
      { weight: 3, arbitrary: brokenValue(schema, DOC).map(json) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(json) },
      { weight: 1, arbitrary: anyText(60) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    )
    : fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map(json) });
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json') },
    { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/json; charset=latin1', 'application/xml', 'multipart/form-data', '') },
  );
  const idempotencyKey = fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9_\-.=+/]{1,40}$/) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 120 }).map((s) => s.replace(/[^\x20-\x7e]/g, 'x')) },
  );
  return fc.record({ caller: fc.constantFrom(...callers), jobId, query, body, contentType, idempotencyKey }).map((r) => {
    const path = op.path.replace('{jobId}', r.jobId);
    const headers: Record<string, string> = {};
    if (r.caller.token) headers.authorization = `Bearer ${r.caller.token}`;
    if (r.body !== undefined && r.contentType) headers['content-type'] = r.contentType;
    if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
    return { op: op.op.operationId, caller: r.caller.name, method: op.method, url: `${path}${r.query ? `?${r.query}` : ''}`, headers, ...(r.body !== undefined ? { body: r.body } : {}) };
  });
}

/** Operations that create a job: their 202 is a job of the caller's. */
const CREATE_OPS = new Set<string>(USER_ROUTES.filter((r) => r.action === 'createJob').map((r) => r.operationId));

/** Sends a request with node:http (which, unlike fetch, sends a body on GET as a careless client may). */
function send(req: Req): Promise<{ status: number; retryAfter: string | undefined; raw: string }> {
  return new Promise((resolve, reject) => {
    const length = req.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(req.body)) };
    const out = http.request(`${e.runtime.url}${req.url}`, { method: req.method, headers: { ...req.headers, ...length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, raw: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    out.on('error', reject);
    out.end(req.body);
  });
}

/** Sends `req` and checks every property of its response; returns a failure message or undefined. */
async function check(req: Req): Promise<string | undefined> {
  const op = OP_BY_ID.get(req.op)!;
  const caller = callers.find((c) => c.name === req.caller)!;
  const res = await send(req);
  const raw = res.raw;
  counts.set(req.op, (counts.get(req.op) ?? 0) + 1);
  const where = `${req.method} ${req.url} as ${caller.name} → ${res.status} ${raw.slice(0, 300)}`;
  const documented = op.op.responses[String(res.status)];
  if (!documented) return `undocumented status: ${where}`;
  if (res.status >= 500 && !(res.status === 503 && res.retryAfter)) return `5xx other than a documented 503: ${where}`;
  const schema = documented.content?.['application/json'].schema;
  if (schema) {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return `not JSON: ${where}`;
    }
    const validate = validatorFor(schema);
    if (!validate(body)) return `body does not match its schema (${ajv.errorsText(validate.errors)}): ${where}`;
    // A creation's 202 names a job of the caller's; an admin's 202 (a cancel requested) names someone else's.
    if (res.status === 202 && caller.sub && CREATE_OPS.has(req.op)) owners.set((body as { jobId: string }).jobId, caller.sub);
  } else if (raw !== '') return `body on a documented empty response: ${where}`;
  const leak = LEAKS.find((re) => re.test(raw));
  if (leak) return `leak ${leak}: ${where}`;
  if (!caller.admin) {
    for (const [id, owner] of owners) if (owner !== caller.sub && raw.includes(id)) return `another user's job ${id}: ${where}`;
  }
  if (op.admin && res.status < 300 && !caller.admin) return `admin route open to a non-admin: ${where}`;
  return undefined;
}

describe('every route, generated requests', () => {
  it(`${RUNS} seeded batches of ${BATCH}: documented statuses and bodies, no 5xx but 503, no leaks; then a job succeeds`, async () => {
    expect(OPS.length).toBe(USER_ROUTES.length + ADMIN_ROUTES.length + STREAM_ROUTES.length);
    const batch = fc.array(fc.constantFrom(...OPS).chain(requestFor), { minLength: BATCH, maxLength: BATCH });
    await fc.assert(
      fc.asyncProperty(batch, async (reqs) => {
        const failures = (await Promise.all(reqs.map(check))).filter((f) => f !== undefined);
        if (failures.length > 0) throw new Error(failures.join('\n'));
      }),
      // Every run, however slow the machine: a run is a fixed amount of work, never a time budget.
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    console.info(`property suite: ${total} requests, seed ${SEED}; per route: ${JSON.stringify(Object.fromEntries([...counts].sort()))}`);
    expect(total).toBe(RUNS * BATCH);
    for (const op of OPS) expect(counts.get(op.op.operationId) ?? 0, op.op.operationId).toBeGreaterThan(5);
    // A user the storm never touched (the storm's users may be at their active-job limit or daily quota).
    const carol = await e.token('carol');
    const created = await e.api('POST', '/api/ai/feynman-evaluations', { token: carol, body: { concept: 'Gravity', explanation: 'Mass attracts mass.' } });
    expect(created.status).toBe(202);
    expect((await e.waitForTerminal(created.body.jobId, carol)).lifecycleStatus).toBe('succeeded');
  }, 600_000);
});
