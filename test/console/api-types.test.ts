import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, renderApiTypes } from '../../console/scripts/api-types.ts';

describe('console/src/api/schema.d.ts', () => {
  it('is generated from the committed docs/openapi.json (run `npm run console:api-types` and commit)', async () => {
    expect(await readFile(API_TYPES_FILE, 'utf8')).toBe(await renderApiTypes());
  });
});
