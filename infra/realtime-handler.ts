/**
 * The `jobs` channel namespace's event handler code for AppSync Events (APPSYNC_JS): an onSubscribe that runs
 * lib/realtime/subscribe-rules.ts — the same function the local hub runs — with the stage's admin rule and
 * audiences baked in, and calls `util.unauthorized()` (the client gets subscribe_error UnauthorizedException)
 * for anything but `allow`. No onPublish: only the backend publishes (IAM), and events pass through unchanged.
 *
 * Bundled at synth with the local esbuild (offline), ESM, no minification and no downlevelling beyond ES2020,
 * `@aws-appsync/utils` left as the runtime's import. test/realtime/handler-code.test.ts parses the result and
 * refuses every construct APPSYNC_JS documents as unsupported, and runs it against the rules' table.
 */
import { buildSync } from 'esbuild';
import { fileURLToPath } from 'node:url';
import type { SubscribePolicy } from '../lib/realtime/subscribe-rules.ts';

/** AppSync's limit on a channel namespace's code (API reference: ChannelNamespace.codeHandlers). */
export const MAX_HANDLER_CODE_CHARS = 32_768;

const RULES = fileURLToPath(new URL('../lib/realtime/subscribe-rules.ts', import.meta.url));

/**
 * The handler code for `policy`.
 * @throws Error when the bundle exceeds {@link MAX_HANDLER_CODE_CHARS}
 */
export function jobsNamespaceHandlerCode(policy: SubscribePolicy): string {
  const entry = `
import { util } from '@aws-appsync/utils';
import { authorizeJobSubscription } from ${JSON.stringify(RULES)};

const POLICY = ${JSON.stringify({ adminClaim: policy.adminClaim, adminGroup: policy.adminGroup, audiences: policy.audiences })};

/** Refuses every subscription the rules do not allow (lib/realtime/subscribe-rules.ts). */
export function onSubscribe(ctx) {
  const identity = ctx.identity;
  const sub = identity && identity.sub;
  const subjectBase64 = typeof sub === 'string' ? util.base64Encode(sub) : '';
  const verdict = authorizeJobSubscription(ctx.info.channel.segments, identity, POLICY, subjectBase64);
  if (verdict !== 'allow') {
    util.unauthorized();
  }
}
`;
  const out = buildSync({
    stdin: { contents: entry, loader: 'js', sourcefile: 'jobs-namespace-handler.js', resolveDir: fileURLToPath(new URL('.', import.meta.url)) },
    // Paths in the bundle's comments relative to the repository, whatever the working directory: the same code,
    // so no spurious namespace update, from every machine.
    absWorkingDir: fileURLToPath(new URL('..', import.meta.url)),
    bundle: true, format: 'esm', platform: 'neutral', target: 'es2020', external: ['@aws-appsync/utils'],
    write: false, minify: false, legalComments: 'none', logLevel: 'silent',
  });
  const code = asDocumentedExport(out.outputFiles[0]!.text);
  if (code.length > MAX_HANDLER_CODE_CHARS) throw new Error(`the jobs namespace handler is ${code.length} characters; AppSync takes ${MAX_HANDLER_CODE_CHARS}`);
  return code;
}

/** `export function onSubscribe` in place of esbuild's trailing `export { onSubscribe }`: the form AWS's examples use. */
function asDocumentedExport(bundle: string): string {
  const trailer = /\nexport \{\n {2}onSubscribe\n\};\n$/;
  if (!trailer.test(bundle) || bundle.split('\nfunction onSubscribe(ctx) {').length !== 2) throw new Error('unexpected handler bundle shape');
  return bundle.replace(trailer, '\n').replace('\nfunction onSubscribe(ctx) {', '\nexport function onSubscribe(ctx) {');
}
