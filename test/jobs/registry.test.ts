import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';
import { EngineError } from '../../lib/errors.ts';
import { jobDefinitions } from '../../lib/job-types/index.ts';
import { syntheticJob, type SyntheticJobInput } from '../../lib/job-types/synthetic-job.ts';
import {
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  firstTokenTimeoutOf,
  maxAttemptsOf,
  parseJobInput,
  streamingPlanOf,
  type JobDefinitionSpec,
} from '../../lib/jobs/definition.ts';
import {
  DuplicateJobDefinitionError,
  InputValidationError,
  InvalidJobDefinitionError,
  UnknownJobTypeError,
} from '../../lib/jobs/errors.ts';
import { createRegistry, JobDefinitionRegistry, jobRegistry } from '../../lib/jobs/registry.ts';

/** A spec loose enough to break on purpose. */
type LooseSpec = Record<string, any>;

function makeSpec(jobType = 'test_job'): JobDefinitionSpec {
  return {
    jobType,
    metadata: { label: 'Test job', description: 'A job for registry tests', domain: 'analysis', version: '1' },
    queue: { queueName: 'background', defaultPriority: 10 },
    execution: {
      timeoutMs: 60_000,
      maxRetries: 3,
      retryBackoff: { type: 'exponential', delayMs: 500, maxDelayMs: 10_000 },
      cancellable: true,
      abortStrategy: 'retry',
    },
    input: { schemaVersion: 'v1' },
    output: { schemaVersion: 'v1' },
    prompt: { key: 'test_prompt', version: 'v2' },
    model: { tier: 'standard' },
    credential: { allowedModes: ['platform_key', 'user_deepseek_key'], defaultMode: 'user_deepseek_key' },
    projector: 'test_projector',
    security: { contentSafetyCheck: true, outputRedaction: false },
    limits: { maxActiveJobsPerUser: 3, dailyQuotaPerUser: 50 },
    inputSchema: z.strictObject({ text: z.string() }),
    outputSchema: z.object({ summary: z.string() }),
  };
}

function brokenSpec(mutate: (spec: LooseSpec) => void): JobDefinitionSpec {
  const spec = makeSpec();
  mutate(spec as LooseSpec);
  return spec;
}

/** The error `fn` throws, checked to be an instance of `type`. */
function thrown<E>(fn: () => unknown, type: new (...args: any[]) => E): E {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return err as E;
  }
  return expect.unreachable(`expected ${type.name}`);
}

function registrationError(spec: JobDefinitionSpec): InvalidJobDefinitionError {
  return thrown(() => new JobDefinitionRegistry().register(spec), InvalidJobDefinitionError);
}

describe('JobDefinitionRegistry.register', () => {
  it('stores a valid definition with defaults applied and returns it', () => {
    const registry = new JobDefinitionRegistry();
    const spec = makeSpec();
    const def = registry.register(spec);

    expect(registry.get('test_job')).toBe(def);
    expect(def.queue).toEqual({ queueName: 'background', defaultPriority: 10, messageGroup: 'job' });
    expect(def.inputSchema).toBe(spec.inputSchema);
    expect(def.outputSchema).toBe(spec.outputSchema);
    expect(maxAttemptsOf(def)).toBe(4);
  });

  it('freezes the registered definition and is unaffected by later changes to the spec', () => {
    const spec = makeSpec();
    const def = new JobDefinitionRegistry().register(spec);
    spec.execution.timeoutMs = 5_000;

    expect(def.execution.timeoutMs).toBe(60_000);
    expect(Object.isFrozen(def)).toBe(true);
    expect(Object.isFrozen(def.execution.retryBackoff)).toBe(true);
    expect(Object.isFrozen(def.credential.allowedModes)).toBe(true);
  });

  it.each(['ab', 'a'.repeat(64), 'quiz_generation_v2'])('accepts jobType %j', (jobType) => {
    expect(new JobDefinitionRegistry().register(makeSpec(jobType)).jobType).toBe(jobType);
  });

  it.each(['', 'a', 'a'.repeat(65), 'Quiz', '1quiz', '_quiz', 'quiz-generation', 'quiz generation', 'quiz.v2'])(
    'rejects jobType %j',
    (jobType) => {
      const err = registrationError(makeSpec(jobType));
      expect(err.paths).toEqual(['jobType']);
      expect(err.code).toBe('INVALID_JOB_DEFINITION');
    },
  );

  it.each([1_000, 600_000])('accepts timeoutMs %i at the bounds', (timeoutMs) => {
    const spec = brokenSpec((s) => (s.execution.timeoutMs = timeoutMs));
    expect(new JobDefinitionRegistry().register(spec).execution.timeoutMs).toBe(timeoutMs);
  });

  it.each([0, 10])('accepts maxRetries %i at the bounds', (maxRetries) => {
    const spec = brokenSpec((s) => (s.execution.maxRetries = maxRetries));
    expect(maxAttemptsOf(new JobDefinitionRegistry().register(spec))).toBe(maxRetries + 1);
  });

  const invalid: [string, (spec: LooseSpec) => void, string | string[]][] = [
    ['an unknown queue', (s) => (s.queue.queueName = 'ai-interactive'), 'queue.queueName'],
    ['a priority above 100', (s) => (s.queue.defaultPriority = 101), 'queue.defaultPriority'],
    ['an unknown message group', (s) => (s.queue.messageGroup = 'tenant'), 'queue.messageGroup'],
    ['timeoutMs 999', (s) => (s.execution.timeoutMs = 999), 'execution.timeoutMs'],
    ['timeoutMs 600001', (s) => (s.execution.timeoutMs = 600_001), 'execution.timeoutMs'],
    ['a fractional timeoutMs', (s) => (s.execution.timeoutMs = 1_500.5), 'execution.timeoutMs'],
    ['negative maxRetries', (s) => (s.execution.maxRetries = -1), 'execution.maxRetries'],
    ['maxRetries 11', (s) => (s.execution.maxRetries = 11), 'execution.maxRetries'],
    ['a backoff delay under 100 ms', (s) => (s.execution.retryBackoff.delayMs = 99), 'execution.retryBackoff.delayMs'],
    [
      'a backoff delay over 600 s',
      (s) => (s.execution.retryBackoff = { type: 'exponential', delayMs: 600_001, maxDelayMs: 900_000 }),
      'execution.retryBackoff.delayMs',
    ],
    ['a backoff cap below the delay', (s) => (s.execution.retryBackoff.maxDelayMs = 499), 'execution.retryBackoff.maxDelayMs'],
    ['a backoff cap over 12 h', (s) => (s.execution.retryBackoff.maxDelayMs = 43_200_001), 'execution.retryBackoff.maxDelayMs'],
    ['a linear backoff', (s) => (s.execution.retryBackoff.type = 'linear'), 'execution.retryBackoff.type'],
    ['an unknown abort strategy', (s) => (s.execution.abortStrategy = 'ignore'), 'execution.abortStrategy'],
    ['a defaultMode outside allowedModes', (s) => (s.credential.allowedModes = ['platform_key']), 'credential.defaultMode'],
    // The default mode cannot be among none, so both fields are named.
    ['no allowed credential modes', (s) => (s.credential.allowedModes = []), ['credential.allowedModes', 'credential.defaultMode']],
    ['a repeated credential mode', (s) => (s.credential.allowedModes = ['user_deepseek_key', 'user_deepseek_key']), 'credential.allowedModes'],
    ['an unknown credential mode', (s) => (s.credential.allowedModes = ['user_deepseek_key', 'vault']), 'credential.allowedModes[1]'],
    ['an unknown domain', (s) => (s.metadata.domain = 'billing'), 'metadata.domain'],
    ['an upper-case prompt key', (s) => (s.prompt.key = 'Synthetic'), 'prompt.key'],
    ['an empty model tier', (s) => (s.model.tier = ''), 'model.tier'],
    ['an empty input schema version', (s) => (s.input.schemaVersion = ''), 'input.schemaVersion'],
    ['zero active jobs per user', (s) => (s.limits.maxActiveJobsPerUser = 0), 'limits.maxActiveJobsPerUser'],
    ['a zero daily quota', (s) => (s.limits.dailyQuotaPerUser = 0), 'limits.dailyQuotaPerUser'],
    ['a misspelt field', (s) => (s.execution.timeout = 5_000), 'execution'],
    ['an unknown top-level field', (s) => (s.projectorKey = 'test_projector'), ''],
    ['missing metadata', (s) => delete s.metadata, 'metadata'],
    ['an input schema that is not zod', (s) => (s.inputSchema = { parse: () => ({}) }), 'inputSchema'],
    ['a missing output schema', (s) => delete s.outputSchema, 'outputSchema'],
    ['a first-token deadline over timeoutMs', (s) => (s.execution.firstTokenTimeoutMs = 60_001), 'execution.firstTokenTimeoutMs'],
    ['a first-token deadline under 1 s', (s) => (s.execution.firstTokenTimeoutMs = 999), 'execution.firstTokenTimeoutMs'],
    ['a streamed field the output does not have', (s) => (s.streaming = { text: ['feedback'] }), 'streaming'],
    ['a streamed text field that is not a string', (s) => ((s.outputSchema = z.object({ summary: z.number() })), (s.streaming = { text: ['summary'] })), 'streaming'],
    ['streamed items of a field that is not an array', (s) => (s.streaming = { items: ['summary'] }), 'streaming'],
    ['a streaming spec that names no field', (s) => (s.streaming = {}), 'streaming'],
    ['a field streamed twice', (s) => (s.streaming = { text: ['summary'], items: ['summary'] }), 'streaming'],
    ['a streamed field that is a path', (s) => (s.streaming = { text: ['summary.text'] }), 'streaming.text[0]'],
    ['streamed text fields that are not a list', (s) => (s.streaming = { text: 'summary' }), 'streaming.text'],
  ];

  it.each(invalid)('rejects %s with a typed error naming the field', (_, mutate, expected) => {
    const paths = typeof expected === 'string' ? [expected] : expected;
    const err = registrationError(brokenSpec(mutate));
    expect(err).toBeInstanceOf(EngineError);
    expect(err.jobType).toBe('test_job');
    expect(err.paths).toEqual(paths);
    for (const path of paths) expect(err.message).toContain(path || '(root)');
    expect(err.retryable).toBe(false);
  });

  it('defaults the first-token deadline, takes one up to timeoutMs, and resolves what a type streams against its output schema', () => {
    const plain = new JobDefinitionRegistry().register(makeSpec());
    expect(firstTokenTimeoutOf(plain)).toBe(DEFAULT_FIRST_TOKEN_TIMEOUT_MS);
    expect(streamingPlanOf(plain)).toBeUndefined();
    const streaming = new JobDefinitionRegistry().register(brokenSpec((s) => {
      s.execution.firstTokenTimeoutMs = 60_000;
      s.outputSchema = z.object({ summary: z.string().optional(), points: z.array(z.object({ p: z.string() })).default([]) });
      s.streaming = { text: ['summary'], items: ['points'] };
    }));
    expect(firstTokenTimeoutOf(streaming)).toBe(60_000);
    const plan = streamingPlanOf(streaming)!;
    expect(plan.text).toEqual(['summary']);
    expect(plan.items.map((i) => i.field)).toEqual(['points']);
    expect(plan.items[0]!.element.safeParse({ p: 'x' }).success).toBe(true);
    expect(Object.isFrozen(streaming.streaming)).toBe(true);
  });

  it('lists every problem of a definition at once and registers nothing', () => {
    const registry = new JobDefinitionRegistry();
    const spec = brokenSpec((s) => {
      s.execution.timeoutMs = 999;
      s.queue.queueName = 'fast';
    });
    const err = thrown(() => registry.register(spec), InvalidJobDefinitionError);
    expect(err.paths.sort()).toEqual(['execution.timeoutMs', 'queue.queueName']);
    expect(registry.has('test_job')).toBe(false);
  });

  it('rejects a second definition of the same job type and keeps the first', () => {
    const registry = new JobDefinitionRegistry();
    const first = registry.register(makeSpec());
    const second = brokenSpec((s) => (s.metadata.label = 'Impostor'));

    const err = thrown(() => registry.register(second), DuplicateJobDefinitionError);
    expect(err.code).toBe('DUPLICATE_JOB_DEFINITION');
    expect(err.jobType).toBe('test_job');
    expect(registry.get('test_job')).toBe(first);
    expect(registry.getAll()).toHaveLength(1);
  });
});

describe('JobDefinitionRegistry lookup', () => {
  it('raises UnknownJobTypeError for a job type nobody registered', () => {
    const registry = createRegistry([makeSpec()]);
    expect(registry.has('missing_job')).toBe(false);
    const err = thrown(() => registry.get('missing_job'), UnknownJobTypeError);
    expect(err).toBeInstanceOf(EngineError);
    expect(err.code).toBe('UNKNOWN_JOB_TYPE');
    expect(err.jobType).toBe('missing_job');
  });

  it('createRegistry holds exactly the given definitions, in order', () => {
    const registry = createRegistry([makeSpec('beta_job'), makeSpec('alpha_job')]);
    expect(registry.getAll().map((d) => d.jobType)).toEqual(['beta_job', 'alpha_job']);
    expect(registry.has('alpha_job')).toBe(true);
    expect(registry.has('synthetic_job')).toBe(false);
  });

  it('createRegistry refuses duplicates', () => {
    expect(() => createRegistry([makeSpec(), makeSpec()])).toThrow(DuplicateJobDefinitionError);
  });
});

describe('the default registry', () => {
  it('holds every job type module listed in lib/job-types', () => {
    expect(jobRegistry.getAll().map((d) => d.jobType)).toEqual(jobDefinitions.map((d) => d.jobType));
  });

  it('holds synthetic_job as specified for tests and benchmarks', () => {
    const def = jobRegistry.get('synthetic_job');
    expect(def.queue).toEqual({ queueName: 'interactive', defaultPriority: 50, messageGroup: 'job' });
    expect(def.execution.timeoutMs).toBe(30_000);
    expect(maxAttemptsOf(def)).toBe(3);
    expect(def.prompt).toEqual({ key: 'synthetic', version: 'v1' });
    expect(def.model.tier).toBe('fast');
    expect(def.projector).toBe('synthetic');
    expect(def.credential).toEqual({ allowedModes: ['platform_key'], defaultMode: 'platform_key' });
    expect(def.outputSchema.parse({ answer: 'forty-two' })).toEqual({ answer: 'forty-two' });
  });

  it('has no switch on jobType anywhere in lib/', () => {
    const libDir = fileURLToPath(new URL('../../lib/', import.meta.url));
    const offenders = readdirSync(libDir, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .filter((file) => /switch\s*\([^)]*jobType\s*\)/.test(readFileSync(libDir + file, 'utf8')));
    expect(offenders).toEqual([]);
  });
});

describe('parseJobInput', () => {
  it('returns the parsed input, typed by the definition', () => {
    const input = parseJobInput(syntheticJob, { prompt: 'hello', scenario: 'rate_limited', sleepMs: 0 });
    expectTypeOf(input).toEqualTypeOf<SyntheticJobInput>();
    expect(input).toEqual({ prompt: 'hello', scenario: 'rate_limited', sleepMs: 0 });
  });

  it.each([
    ['an empty prompt', { prompt: '' }, ['prompt']],
    ['a prompt over 4000 characters', { prompt: 'x'.repeat(4001) }, ['prompt']],
    ['a sleep over 60 s', { prompt: 'hi', sleepMs: 60_001 }, ['sleepMs']],
    ['a fractional sleep', { prompt: 'hi', sleepMs: 1.5 }, ['sleepMs']],
    ['an unknown field', { prompt: 'hi', extra: true }, ['']],
    ['no prompt and a numeric scenario', { scenario: 7 }, ['prompt', 'scenario']],
  ])('rejects %s with VALIDATION_FAILED and the field paths', (_, input, paths) => {
    const err = thrown(() => parseJobInput(jobRegistry.get('synthetic_job'), input), InputValidationError);
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.retryable).toBe(false);
    expect(err.jobType).toBe('synthetic_job');
    expect(err.issues.map((i) => i.path).sort()).toEqual(paths);
  });

  it('never echoes the offending value in the public message', () => {
    const secret = 'sk-live-0123456789abcdefghij';
    const err = thrown(() => parseJobInput(syntheticJob, { prompt: 'hi', sleepMs: secret }), InputValidationError);
    expect(err.message).toContain('sleepMs');
    expect(err.message).not.toContain(secret);
  });
});
