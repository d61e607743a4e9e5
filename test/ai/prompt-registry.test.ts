import { describe, expect, it } from 'vitest';
import {
  DuplicatePromptError,
  getPrompt,
  PromptRegistry,
  promptRegistry,
  UnknownPromptError,
} from '../../lib/ai/prompts/registry.ts';
import type { PromptTemplate } from '../../lib/ai/prompts/prompt-template.ts';

const template = (version: string): PromptTemplate<{ topic: string }> => ({
  key: 'quiz',
  version,
  system: `Reply with a JSON object (${version}).`,
  render: ({ topic }) => `Topic: ${topic}`,
});

describe('PromptRegistry', () => {
  it('keeps each version of a key apart', () => {
    const registry = new PromptRegistry();
    registry.register(template('v1'));
    registry.register(template('v2'));
    expect(registry.get('quiz', 'v1').system).toContain('v1');
    expect(registry.get('quiz', 'v2').system).toContain('v2');
    expect(registry.get('quiz', 'v2').render({ topic: 'tides' })).toBe('Topic: tides');
  });

  it('refuses an unknown key or version with a typed error', () => {
    const registry = new PromptRegistry();
    registry.register(template('v1'));
    expect(() => registry.get('quiz', 'v9')).toThrow(UnknownPromptError);
    expect(() => registry.get('nope', 'v1')).toThrow(UnknownPromptError);
    expect(() => getPrompt('synthetic', 'v0')).toThrow(UnknownPromptError);
  });

  it('never overwrites a registered version', () => {
    const registry = new PromptRegistry();
    registry.register(template('v1'));
    expect(() => registry.register({ ...template('v1'), system: 'changed' })).toThrow(DuplicatePromptError);
    expect(registry.get('quiz', 'v1').system).not.toBe('changed');
  });

  it('holds the catalogue prompts from the start', () => {
    expect(promptRegistry.has('synthetic', 'v1')).toBe(true);
  });
});

describe('the synthetic@v1 prompt', () => {
  const prompt = getPrompt('synthetic', 'v1');

  it('asks for a JSON object with the synthetic output fields', () => {
    expect(prompt.system).toMatch(/JSON object/);
    expect(prompt.system).toMatch(/"answer"/);
    expect(prompt.system).toMatch(/"echo"/);
  });

  it('carries the scenario and sleep markers only when the input sets them', () => {
    expect(prompt.render({ prompt: 'Hi' })).toBe('Hi');
    const rendered = prompt.render({ prompt: 'Hi', scenario: 'rate_limit:2', sleepMs: 150 });
    expect(rendered).toContain('[scenario:rate_limit:2]');
    expect(rendered).toContain('[sleep:150]');
    expect(prompt.render({ prompt: 'Hi', scenario: 'x] [scenario:hang' })).not.toContain('[scenario:hang]');
  });
});
