import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../lib/ai/types.ts';
import { startMockAiServer, defaultMockRespond, type MockAiServer } from '../../lib/dev/mock-ai-server.ts';
import { AmbiguousMockPromptError, createJobTypeMockResponder, jobTypeMockResponder } from '../../lib/dev/mock-responder.ts';
import { jobTypeModules, type JobTypeModule } from '../../lib/job-types/index.ts';

/** A valid input per job type; a new type without one fails the first test below. */
const sampleInputs: Record<string, unknown> = {
  synthetic_job: { prompt: 'Say hi', scenario: 'ok' },
  feynman_evaluation: { concept: 'Osmosis', explanation: 'Water moves through a membrane toward more salt.' },
  quiz_generation: { sourceText: 'Rome was founded in 753 BC. It became an empire.', count: 6, difficulty: 'easy' },
  flashcard_generation: { sourceText: 'A byte has eight bits. A nibble has four.', maxCards: 5 },
};

/** The chat messages the engine sends for a job of `module`'s type with `input`. */
function requestFor(module: JobTypeModule, input: unknown): ChatMessage[] {
  const parsed = module.definition.inputSchema.parse(input);
  return [
    { role: 'system', content: module.prompt.system },
    { role: 'user', content: module.prompt.render(parsed) },
  ];
}

describe('jobTypeMockResponder', () => {
  it('has a sample input for every job type module', () => {
    expect(Object.keys(sampleInputs).sort()).toEqual(jobTypeModules.map((m) => m.definition.jobType).sort());
  });

  it.each(jobTypeModules.map((m) => [m.definition.jobType, m] as const))(
    'answers a %s request with an output its definition accepts',
    (jobType, module) => {
      const answer = jobTypeMockResponder({ messages: requestFor(module, sampleInputs[jobType]) });
      expect(module.definition.outputSchema.safeParse(answer).success).toBe(true);
    },
  );

  it('answers the requested number of quiz questions', () => {
    const quiz = jobTypeModules.find((m) => m.definition.jobType === 'quiz_generation')!;
    const answer = jobTypeMockResponder({ messages: requestFor(quiz, sampleInputs.quiz_generation) }) as { questions: unknown[] };
    expect(answer.questions).toHaveLength(6);
  });

  it('falls back to the synthetic { answer, echo } for an unknown system prompt or none', () => {
    for (const messages of [
      [{ role: 'system', content: 'You are a pirate.' }, { role: 'user', content: 'Ahoy [sleep:5]' }],
      [{ role: 'user', content: 'No system message at all' }],
    ] satisfies ChatMessage[][]) {
      expect(jobTypeMockResponder({ messages })).toEqual(defaultMockRespond({ model: 'm', messages, jsonMode: true }));
    }
  });

  it('refuses modules whose prompts open with the same line', () => {
    const [first] = jobTypeModules;
    expect(() => createJobTypeMockResponder([first!, { ...first!, definition: { ...first!.definition, jobType: 'twin_job' } }])).toThrow(
      AmbiguousMockPromptError,
    );
  });
});

describe('the mock AI server with jobTypeMockResponder', () => {
  let server: MockAiServer;
  beforeAll(async () => {
    server = await startMockAiServer({ respond: jobTypeMockResponder });
  });
  afterAll(async () => {
    await server.close();
  });

  it('returns valid JSON content for a flashcard request over HTTP', async () => {
    const module = jobTypeModules.find((m) => m.definition.jobType === 'flashcard_generation')!;
    const res = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer test', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-model', messages: requestFor(module, sampleInputs.flashcard_generation), response_format: { type: 'json_object' } }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    const output = module.definition.outputSchema.parse(JSON.parse(body.choices[0]!.message.content)) as { cards: unknown[] };
    expect(output.cards).toHaveLength(2);
  });
});
