/**
 * `synthetic@v1`, the prompt of `synthetic_job`. Its user message carries the mock provider's markers
 * (lib/dev/mock-ai-server.ts): `[scenario:<scenario>]` when the input sets a scenario and `[sleep:<ms>]`
 * when it sets `sleepMs`, so one job input drives the mock's behaviour end to end. A real model ignores them.
 */
import type { SyntheticJobInput } from '../../job-types/synthetic-job.ts';
import type { PromptTemplate } from './prompt-template.ts';

/** Brackets would end a marker early; scenario names never need them. */
const markerValue = (value: string) => value.replace(/[[\]\s]/g, '');

/** The system prompt asks for `{answer, echo}` (the synthetic job's output schema); the user message is the prompt plus markers. */
export const syntheticPromptV1: PromptTemplate<SyntheticJobInput> = {
  key: 'synthetic',
  version: 'v1',
  system: [
    'You answer test prompts briefly.',
    'Reply with a JSON object only, with exactly these fields:',
    '"answer": a string, your short answer to the prompt;',
    '"echo": a string, the first 40 characters of the prompt.',
  ].join('\n'),
  render(input) {
    const markers = [
      ...(input.scenario ? [`[scenario:${markerValue(input.scenario)}]`] : []),
      ...(input.sleepMs !== undefined ? [`[sleep:${input.sleepMs}]`] : []),
    ];
    return markers.length > 0 ? `${input.prompt}\n\n${markers.join(' ')}` : input.prompt;
  },
};
