/** `npm run console:api-types`: writes console/src/api/schema.d.ts from docs/openapi.json. */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { API_TYPES_FILE, renderApiTypes } from './api-types.ts';

await writeFile(API_TYPES_FILE, await renderApiTypes());
console.log(`wrote ${fileURLToPath(API_TYPES_FILE)}`);
