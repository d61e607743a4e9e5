import { describe, expect, it } from 'vitest';
import { syntheticPromptV1 } from '../../lib/ai/prompts/synthetic.ts';
import { defaultMockRespond } from '../../lib/dev/mock-ai-server.ts';
import {
  SYNTHETIC_ARTIFACT_TYPE,
  syntheticJobModule as module,
  syntheticJobInputSchema as inputSchema,
  syntheticJobOutputSchema as outputSchema,
} from '../../lib/job-types/synthetic-job.ts';
import { countRows } from '../helpers/db.ts';
import { insertJob } from '../helpers/factories.ts';
import { projectCommitted, projectRolledBack } from './helpers.ts';

describe('synthetic_job module', () => {
  it('uses the synthetic@v1 prompt its definition names and projector "synthetic"', () => {
    expect(module.prompt).toBe(syntheticPromptV1);
    expect(module.definition.prompt).toEqual({ key: 'synthetic', version: 'v1' });
    expect(module.projector?.key).toBe(module.definition.projector);
  });

  it('projects one reference to the job itself and writes no business row', async () => {
    const job = await insertJob({ lifecycleStatus: 'running' });
    const refs = await projectCommitted(module, job, { answer: 'forty-two' });
    expect(refs).toEqual([{ artifactType: SYNTHETIC_ARTIFACT_TYPE, artifactId: job.id, ordinal: 0 }]);
    expect(await countRows('AiJobArtifact')).toBe(0);
  });

  it('returns the same reference inside a rolled-back transaction', async () => {
    const job = await insertJob({ lifecycleStatus: 'running' });
    expect(await projectRolledBack(module, job, { answer: 'x' })).toEqual([
      { artifactType: SYNTHETIC_ARTIFACT_TYPE, artifactId: job.id, ordinal: 0 },
    ]);
  });

  it.each([
    ['a plain prompt', { prompt: 'What is the answer to everything?' }],
    ['markers', { prompt: 'Hello', scenario: 'fail_once:k1', sleepMs: 20 }],
  ])('mock response for %s is valid and equals the mock server default answer', (_, input) => {
    const message = module.prompt.render(inputSchema.parse(input));
    const mock = module.mockResponse(message);
    expect(outputSchema.safeParse(mock).success).toBe(true);
    expect(mock).toEqual(defaultMockRespond({ model: 'm', messages: [{ role: 'user', content: message }], jsonMode: true }));
  });
});
