/** Token settings shared by the local runtime and `npm run token`. */
import { fileURLToPath } from 'node:url';
import type { TokenAudience } from '../../api/local-jwt.ts';

export const LOCAL_TOKEN_AUDIENCE: TokenAudience = { issuer: 'ai-jobs-local', audience: 'ai-jobs-api' };

/** The local signing key, created on first use (gitignored under node_modules/.cache). */
export const DEFAULT_JWT_KEY_FILE = fileURLToPath(new URL('../../../node_modules/.cache/ai-job-engine/local-jwt-key', import.meta.url));
