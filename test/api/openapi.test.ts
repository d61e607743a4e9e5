import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, renderOpenApiDocument } from '../../lib/api/openapi.ts';
import { ADMIN_ROUTES, STREAM_ROUTES, USER_ROUTES } from '../../lib/api/routes.ts';

type Doc = { openapi: string; paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>; components: { schemas: Record<string, unknown> } };

describe('docs/openapi.json', () => {
  it('is up to date with the route tables and zod schemas (run `npm run openapi` and commit)', async () => {
    const committed = await readFile(new URL('../../docs/openapi.json', import.meta.url), 'utf8');
    expect(committed).toBe(renderOpenApiDocument());
  });

  it('describes every route once, with its operationId, as OpenAPI 3.1', () => {
    const doc = buildOpenApiDocument() as Doc;
    expect(doc.openapi).toBe('3.1.0');
    for (const route of [...USER_ROUTES, ...ADMIN_ROUTES, ...STREAM_ROUTES]) {
      expect(doc.paths[route.path]?.[route.method.toLowerCase()]?.operationId).toBe(route.operationId);
    }
  });

  it('resolves every $ref to a component', () => {
    const doc = buildOpenApiDocument() as Doc;
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const id of refs) expect(doc.components.schemas).toHaveProperty(id);
  });

  it('documents the creation bodies from the job types\' own input schemas (strict: no unknown fields)', () => {
    const schemas = (buildOpenApiDocument() as Doc).components.schemas as Record<string, { additionalProperties?: boolean; required?: string[] }>;
    expect(schemas.QuizGenerationInput).toMatchObject({ additionalProperties: false, required: ['sourceText', 'count', 'difficulty'] });
    expect(schemas.FlashcardGenerationInput?.required).toEqual(['sourceText']);
    expect(schemas.JobStatusResponse).toMatchObject({ additionalProperties: false });
  });
});
