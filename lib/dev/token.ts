/**
 * `npm run token -- --user <id> [--admin] [--expires-in 1h]`: prints a token for the local runtime on stdout
 * (only the token), signed with the local key the runtime uses.
 */
import { parseArgs } from 'node:util';
import { loadOrCreateLocalJwtKey, signLocalToken } from '../api/local-jwt.ts';
import { DEFAULT_JWT_KEY_FILE, LOCAL_TOKEN_AUDIENCE } from './local-runtime/local-auth.ts';

const { values } = parseArgs({
  options: { user: { type: 'string' }, admin: { type: 'boolean' }, 'expires-in': { type: 'string' } },
});
if (!values.user) {
  console.error('usage: npm run -s token -- --user <id> [--admin] [--expires-in 1h]');
  process.exit(2);
}
const key = await loadOrCreateLocalJwtKey(DEFAULT_JWT_KEY_FILE);
const token = await signLocalToken(key, {
  sub: values.user, admin: values.admin ?? false, ...LOCAL_TOKEN_AUDIENCE,
  ...(values['expires-in'] ? { expiresIn: values['expires-in'] } : {}),
});
process.stdout.write(`${token}\n`);
