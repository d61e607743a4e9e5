/**
 * `npm run openapi`: writes docs/openapi.json from the route tables and zod schemas (./openapi.ts).
 * Commit the result; test/api/openapi.test.ts fails while the committed file is stale.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderOpenApiDocument } from './openapi.ts';

/** Where the committed document lives. */
const OPENAPI_PATH = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));

await writeFile(OPENAPI_PATH, renderOpenApiDocument());
console.log(`wrote ${OPENAPI_PATH}`);
