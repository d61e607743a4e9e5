import { describe, expect, it } from 'vitest';
import { getPrisma } from '../../lib/db/client.ts';
import {
  FLASHCARD_ARTIFACT_TYPE,
  flashcardGenerationInputSchema as inputSchema,
  flashcardGenerationModule as module,
  flashcardGenerationOutputSchema as outputSchema,
  type FlashcardGenerationOutput,
} from '../../lib/job-types/flashcard-generation.ts';
import { BusinessValidationError } from '../../lib/jobs/failures.ts';
import { countRows } from '../helpers/db.ts';
import { insertJobWithInput, issuePaths, projectCommitted, projectRolledBack } from './helpers.ts';

const SOURCE = 'Water boils at 100 °C at sea level. Ice melts at 0 °C. Steam is water vapour.';
const output: FlashcardGenerationOutput = {
  cards: [
    { front: 'Boiling point of water?', back: '100 °C at sea level' },
    { front: 'Melting point of ice?', back: '0 °C' },
  ],
};

function cards(n: number) {
  return Array.from({ length: n }, (_, i) => ({ front: `F${i}`, back: `B${i}` }));
}

describe('flashcard_generation input schema', () => {
  it('accepts source text and defaults maxCards to 20', () => {
    expect(inputSchema.parse({ sourceText: SOURCE })).toEqual({ sourceText: SOURCE, maxCards: 20 });
  });

  it.each([
    ['blank source text', { sourceText: '  ' }, ['sourceText']],
    ['source text over 20000 characters', { sourceText: 's'.repeat(20_001) }, ['sourceText']],
    ['maxCards 0', { sourceText: SOURCE, maxCards: 0 }, ['maxCards']],
    ['maxCards 51', { sourceText: SOURCE, maxCards: 51 }, ['maxCards']],
    ['an unknown field', { sourceText: SOURCE, deck: 'biology' }, ['']],
  ])('rejects %s, naming the fields', (_, input, paths) => {
    expect(issuePaths(inputSchema.safeParse(input))).toEqual(paths);
  });
});

describe('flashcard_generation output schema', () => {
  it.each([
    ['no cards', { cards: [] }, ['cards']],
    ['51 cards', { cards: cards(51) }, ['cards']],
    ['a card without a back', { cards: [{ front: 'F' }] }, ['cards.0.back']],
    ['an empty front', { cards: [{ front: ' ', back: 'B' }] }, ['cards.0.front']],
  ])('rejects %s', (_, value, paths) => {
    expect(issuePaths(outputSchema.safeParse(value))).toEqual(paths);
  });
});

describe('flashcard_generation prompt', () => {
  it('pins key and version to the definition and asks for a JSON object with cards of front and back', () => {
    expect({ key: module.prompt.key, version: module.prompt.version }).toEqual(module.definition.prompt);
    expect(module.prompt.system.split('\n')[0]).toBe('Task: flashcard_generation v1');
    expect(module.prompt.system).toContain('JSON object');
    for (const field of ['"cards"', '"front"', '"back"']) expect(module.prompt.system).toContain(field);
  });

  it('renders the card limit and the source text', () => {
    const message = module.prompt.render(inputSchema.parse({ sourceText: SOURCE, maxCards: 8 }));
    expect(message).toContain('Maximum number of cards: 8');
    expect(message).toContain(`<source_text>\n${SOURCE}\n</source_text>`);
  });
});

describe('flashcard_generation projector', () => {
  it('writes one Flashcard per card in order and returns their references', async () => {
    const job = await insertJobWithInput(module, { sourceText: SOURCE }, { userId: 'learner-9' });
    const refs = await projectCommitted(module, job, output);

    const rows = await getPrisma().flashcard.findMany({ orderBy: { ordinal: 'asc' } });
    expect(rows.map(({ jobId, userId, ordinal, front, back }) => ({ jobId, userId, ordinal, front, back }))).toEqual(
      output.cards.map((c, ordinal) => ({ jobId: job.id, userId: 'learner-9', ordinal, ...c })),
    );
    expect(refs).toEqual(rows.map((r) => ({ artifactType: FLASHCARD_ARTIFACT_TYPE, artifactId: r.id, ordinal: r.ordinal })));
  });

  it('leaves no rows when the projection transaction rolls back', async () => {
    const job = await insertJobWithInput(module, { sourceText: SOURCE });
    expect(await projectRolledBack(module, job, output)).toHaveLength(2);
    expect(await countRows('Flashcard')).toBe(0);
  });

  it('rejects more cards than the job allowed with BUSINESS_VALIDATION and writes nothing', async () => {
    const job = await insertJobWithInput(module, { sourceText: SOURCE, maxCards: 3 });
    await expect(projectCommitted(module, job, { cards: cards(4) })).rejects.toBeInstanceOf(BusinessValidationError);
    expect(await countRows('Flashcard')).toBe(0);
    expect(await projectCommitted(module, job, { cards: cards(3) })).toHaveLength(3);
  });

  it('returns the existing references and writes nothing when projected again', async () => {
    const job = await insertJobWithInput(module, { sourceText: SOURCE });
    const first = await projectCommitted(module, job, output);
    expect(await projectCommitted(module, job, { cards: cards(5) })).toEqual(first);
    expect(await countRows('Flashcard')).toBe(2);
  });
});

describe('flashcard_generation mock response', () => {
  it.each([
    ['three sentences', { sourceText: SOURCE }, 3],
    ['more sentences than maxCards', { sourceText: 'One. Two. Three. Four.', maxCards: 2 }, 2],
    ['one huge sentence', { sourceText: 'z'.repeat(20_000) }, 1],
  ])('is a valid output for %s', (_, input, expectedCards) => {
    const message = module.prompt.render(inputSchema.parse(input));
    const mock = outputSchema.parse(module.mockResponse(message));
    expect(mock.cards).toHaveLength(expectedCards);
    expect(module.mockResponse(message)).toEqual(mock);
  });
});
