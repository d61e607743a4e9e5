/**
 * The local mock provider's answers for every job type, so a job of any type run against the mock server
 * (lib/dev/mock-ai-server.ts) gets an output its definition accepts. Plug it in as the server's `respond`.
 *
 * The request alone identifies the job type, as a real provider sees it: the first line of the system message
 * is the first line of that type's prompt (`Task: quiz_generation v1` for the types in lib/job-types/, see
 * prompt-text.ts). The lookup table is built from the job type modules, so a new type needs nothing here.
 */
import type { ChatMessage } from '../ai/types.ts';
import { EngineError } from '../errors.ts';
import { jobTypeModules, type JobTypeModule } from '../job-types/index.ts';
import { firstLine } from '../job-types/prompt-text.ts';
import { mockSyntheticJob } from '../job-types/synthetic-job.ts';

/** What the responder reads of a chat request (a subset of the mock server's context). */
export interface MockResponderContext {
  messages: readonly ChatMessage[];
}

/** A mock answer builder: the object the mock server sends JSON-encoded. */
export type MockResponder = (ctx: MockResponderContext) => object;

/** Two job types' prompts open with the same line, so a request could not tell them apart. */
export class AmbiguousMockPromptError extends EngineError {
  readonly code = 'AMBIGUOUS_MOCK_PROMPT';
  constructor(readonly line: string) {
    super(`Several job type prompts start with "${line}"; give each a distinct first line`);
  }
}

/**
 * Builds a responder over `modules`: the module whose prompt's first line opens the request's system message
 * answers with its `mockResponse(last user message)`; any other request gets the synthetic answer
 * `{ answer, echo }` (the same as the mock server's default answer).
 * @throws AmbiguousMockPromptError when two modules' prompts share a first line
 */
export function createJobTypeMockResponder(modules: readonly JobTypeModule[] = jobTypeModules): MockResponder {
  const byFirstLine = new Map<string, JobTypeModule>();
  for (const module of modules) {
    const line = firstLine(module.prompt.system);
    if (byFirstLine.has(line)) throw new AmbiguousMockPromptError(line);
    byFirstLine.set(line, module);
  }
  return (ctx) => {
    const system = ctx.messages.find((m) => m.role === 'system')?.content ?? '';
    const userMessage = ctx.messages.findLast((m) => m.role === 'user')?.content ?? '';
    const module = byFirstLine.get(firstLine(system));
    return module ? module.mockResponse(userMessage) : mockSyntheticJob(userMessage);
  };
}

/** The responder over every job type in lib/job-types/: plug into `startMockAiServer({ respond })`. */
export const jobTypeMockResponder: MockResponder = createJobTypeMockResponder();
