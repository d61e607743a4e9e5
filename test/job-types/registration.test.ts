import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { DuplicatePromptError, PromptRegistry, promptRegistry } from '../../lib/ai/prompts/registry.ts';
import { EngineError } from '../../lib/errors.ts';
import {
  jobTypeModules,
  JobTypeWiringError,
  registerJobTypeParts,
  registerJobTypes,
  type JobTypeModule,
} from '../../lib/job-types/index.ts';
import { syntheticJobModule } from '../../lib/job-types/synthetic-job.ts';
import { DuplicateProjectorError, ProjectorRegistry, projectorRegistry, UnknownProjectorError } from '../../lib/jobs/projector-registry.ts';
import type { ResultProjector } from '../../lib/jobs/projector.ts';
import { JobDefinitionRegistry, jobRegistry } from '../../lib/jobs/registry.ts';

/** A minimal job type module named `name`, with overrides for the definition's references. */
function fakeModule(name: string, refs: { projector?: string | null; promptVersion?: string } = {}): JobTypeModule {
  const projector: ResultProjector = { key: `${name}_projector`, project: async () => [] };
  const definitionProjector = refs.projector === null ? undefined : (refs.projector ?? projector.key);
  return {
    definition: {
      jobType: name,
      metadata: { label: name, description: 'fake', domain: 'analysis', version: '1' },
      queue: { queueName: 'background', defaultPriority: 50 },
      execution: {
        timeoutMs: 10_000, maxRetries: 0, retryBackoff: { type: 'exponential', delayMs: 1_000, maxDelayMs: 1_000 },
        cancellable: true, abortStrategy: 'fail',
      },
      input: { schemaVersion: 'v1' },
      output: { schemaVersion: 'v1' },
      prompt: { key: name, version: refs.promptVersion ?? 'v1' },
      model: { tier: 'fast' },
      credential: { allowedModes: ['platform_key'], defaultMode: 'platform_key' },
      ...(definitionProjector === undefined ? {} : { projector: definitionProjector }),
      security: { contentSafetyCheck: false, outputRedaction: false },
      limits: { maxActiveJobsPerUser: 1, dailyQuotaPerUser: 1 },
      inputSchema: z.strictObject({ text: z.string() }),
      outputSchema: z.object({ ok: z.boolean() }),
    },
    prompt: { key: name, version: 'v1', system: `Task: ${name} v1\nReply with a JSON object.`, render: () => 'hi' },
    projector,
    mockResponse: () => ({ ok: true }),
  };
}

function freshRegistries() {
  return { definitions: new JobDefinitionRegistry(), prompts: new PromptRegistry(), projectors: new ProjectorRegistry() };
}

function wiringError(fn: () => unknown): JobTypeWiringError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(JobTypeWiringError);
    return err as JobTypeWiringError;
  }
  return expect.unreachable('expected JobTypeWiringError');
}

describe('the process-wide registries', () => {
  it('hold every job type module: definition, prompt and projector', () => {
    expect(jobRegistry.getAll().map((d) => d.jobType)).toEqual(jobTypeModules.map((m) => m.definition.jobType));
    for (const module of jobTypeModules) {
      expect(promptRegistry.get(module.prompt.key, module.prompt.version).system).toBe(module.prompt.system);
      if (module.projector) expect(projectorRegistry.get(module.projector.key)).toBe(module.projector);
    }
  });

  it('resolve every registered definition’s prompt and projector', () => {
    for (const def of jobRegistry.getAll()) {
      expect(promptRegistry.has(def.prompt.key, def.prompt.version)).toBe(true);
      if (def.projector) expect(projectorRegistry.has(def.projector)).toBe(true);
    }
  });

  it('hold every prompt and projector as soon as the catalogue loads, before any definition registry', async () => {
    vi.resetModules();
    const prompts = await import('../../lib/ai/prompts/registry.ts');
    const projectors = await import('../../lib/jobs/projector-registry.ts');
    const catalogue = await import('../../lib/job-types/index.ts');
    for (const module of catalogue.jobTypeModules) {
      expect(prompts.promptRegistry.has(module.prompt.key, module.prompt.version)).toBe(true);
      expect(projectors.projectorRegistry.has(module.projector!.key)).toBe(true);
    }
  });

  it('are left as they are when the parts are registered again', () => {
    const before = projectorRegistry.keys();
    registerJobTypeParts();
    expect(projectorRegistry.keys()).toEqual(before);
  });

  it('list the real job types with one module each', () => {
    expect(jobTypeModules.map((m) => m.definition.jobType)).toEqual([
      'synthetic_job', 'feynman_evaluation', 'quiz_generation', 'flashcard_generation',
    ]);
  });
});

describe('registerJobTypes', () => {
  it('registers each part of each module in its registry', () => {
    const r = freshRegistries();
    registerJobTypes(r.definitions, { modules: [fakeModule('alpha_job'), fakeModule('beta_job')], ...r });
    expect(r.definitions.getAll().map((d) => d.jobType)).toEqual(['alpha_job', 'beta_job']);
    expect(r.prompts.has('beta_job', 'v1')).toBe(true);
    expect(r.projectors.keys()).toEqual(['alpha_job_projector', 'beta_job_projector']);
  });

  it('fails with JobTypeWiringError when a definition names a projector nobody registered, and registers nothing', () => {
    const r = freshRegistries();
    const err = wiringError(() =>
      registerJobTypes(r.definitions, { modules: [fakeModule('alpha_job'), fakeModule('beta_job', { projector: 'ghost' })], ...r }),
    );
    expect(err).toBeInstanceOf(EngineError);
    expect(err.code).toBe('JOB_TYPE_WIRING');
    expect(err.problems).toEqual([{ jobType: 'beta_job', kind: 'projector', ref: 'ghost' }]);
    expect(err.message).toContain('"beta_job" names projector "ghost"');
    expect(r.definitions.getAll()).toEqual([]);
    expect(r.projectors.keys()).toEqual([]);
  });

  it('fails with JobTypeWiringError when a definition names a prompt version nobody registered', () => {
    const r = freshRegistries();
    const err = wiringError(() => registerJobTypes(r.definitions, { modules: [fakeModule('alpha_job', { promptVersion: 'v2' })], ...r }));
    expect(err.problems).toEqual([{ jobType: 'alpha_job', kind: 'prompt', ref: 'alpha_job@v2' }]);
  });

  it('lists every unresolved reference at once', () => {
    const r = freshRegistries();
    const modules = [fakeModule('alpha_job', { projector: 'p1', promptVersion: 'v9' }), fakeModule('beta_job', { projector: 'p2' })];
    expect(wiringError(() => registerJobTypes(r.definitions, { modules, ...r })).problems).toHaveLength(3);
  });

  it('resolves references to a projector another module contributes or one already registered', () => {
    const r = freshRegistries();
    r.projectors.register({ key: 'shared_projector', project: async () => [] });
    const modules = [fakeModule('alpha_job', { projector: 'beta_job_projector' }), fakeModule('beta_job', { projector: 'shared_projector' })];
    registerJobTypes(r.definitions, { modules, ...r });
    expect(r.definitions.get('alpha_job').projector).toBe('beta_job_projector');
  });

  it('accepts a definition without a projector', () => {
    const r = freshRegistries();
    registerJobTypes(r.definitions, { modules: [fakeModule('alpha_job', { projector: null })], ...r });
    expect(r.definitions.get('alpha_job').projector).toBeUndefined();
  });

  it('skips a prompt the catalogue already registered, but refuses a different template under the same version', () => {
    const r = freshRegistries();
    r.prompts.register(syntheticJobModule.prompt);
    registerJobTypes(r.definitions, { modules: [syntheticJobModule], ...r });
    expect(r.definitions.has('synthetic_job')).toBe(true);

    const impostor = { ...syntheticJobModule, prompt: { ...syntheticJobModule.prompt, system: 'Something else' } };
    const other = freshRegistries();
    other.prompts.register(syntheticJobModule.prompt);
    expect(() => registerJobTypes(other.definitions, { modules: [impostor], ...other })).toThrow(DuplicatePromptError);
  });

  it('refuses a different projector under a key already registered', () => {
    const r = freshRegistries();
    const alpha = fakeModule('alpha_job');
    registerJobTypeParts({ modules: [alpha], ...r });
    const rival = { ...alpha, projector: { key: 'alpha_job_projector', project: async () => [] } };
    expect(() => registerJobTypeParts({ modules: [rival], ...r })).toThrow(DuplicateProjectorError);
  });

  it('refuses two modules contributing the same projector key', () => {
    const r = freshRegistries();
    const twin = { ...fakeModule('beta_job', { projector: 'alpha_job_projector' }), projector: fakeModule('alpha_job').projector! };
    expect(() => registerJobTypes(r.definitions, { modules: [fakeModule('alpha_job'), twin], ...r })).toThrow(DuplicateProjectorError);
  });
});

describe('ProjectorRegistry', () => {
  it('returns a registered projector and says whether a key is known', () => {
    const registry = new ProjectorRegistry();
    const projector: ResultProjector = { key: 'p', project: async () => [] };
    registry.register(projector);
    expect(registry.get('p')).toBe(projector);
    expect(registry.has('p')).toBe(true);
    expect(registry.has('q')).toBe(false);
  });

  it('raises UnknownProjectorError for a key nobody registered', () => {
    const err = (() => {
      try {
        new ProjectorRegistry().get('missing');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UnknownProjectorError);
    expect(err).toBeInstanceOf(EngineError);
    expect((err as UnknownProjectorError).code).toBe('UNKNOWN_PROJECTOR');
    expect((err as UnknownProjectorError).key).toBe('missing');
  });

  it('refuses a second projector under the same key and keeps the first', () => {
    const registry = new ProjectorRegistry();
    const first: ResultProjector = { key: 'p', project: async () => [] };
    registry.register(first);
    expect(() => registry.register({ key: 'p', project: async () => [] })).toThrow(DuplicateProjectorError);
    expect(registry.get('p')).toBe(first);
  });
});
