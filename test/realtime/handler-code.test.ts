/**
 * The `jobs` namespace handler code the stack deploys to AppSync Events (infra/realtime-handler.ts):
 * - uses none of the constructs the APPSYNC_JS runtime documents as unsupported
 *   (https://docs.aws.amazon.com/appsync/latest/eventapi/runtime-supported-features.html), nor the ones this
 *   project keeps out to stay clear of the runtime's validator (classes, `new`, regular expressions, callbacks);
 * - and, run with a stand-in for `util` (UTF-8 base64; `unauthorized` throws as the runtime ends the handler),
 *   allows and refuses exactly as the rules the local hub runs.
 */
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundling.ts';
import { MAX_HANDLER_CODE_CHARS, jobsNamespaceHandlerCode } from '../../infra/realtime-handler.ts';
import { channelSegments, ownerChannels } from '../../lib/realtime/channel.ts';
import { ownerSegmentOfSubjectSync, utf8Base64 } from '../../lib/realtime/server-channel.ts';
import { channelFor, newJobId } from './realtime-fixture.ts';

const POLICY = { adminClaim: 'roles', adminGroup: 'ops-admin', audiences: ['ai-jobs-api'] };
const code = jobsNamespaceHandlerCode(POLICY);

/** Every construct of `source` that APPSYNC_JS refuses, or this project avoids there. */
function unsupportedConstructs(source: string): string[] {
  const file = ts.createSourceFile('handler.js', source, ts.ScriptTarget.ES2020, true, ts.ScriptKind.JS);
  const found: string[] = [];
  const refuse = (node: ts.Node, what: string) => found.push(`${what} at ${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
  const forbidden = new Map<ts.SyntaxKind, string>([
    [ts.SyntaxKind.ForStatement, 'for(;;)'], [ts.SyntaxKind.WhileStatement, 'while'], [ts.SyntaxKind.DoStatement, 'do-while'],
    [ts.SyntaxKind.TryStatement, 'try'], [ts.SyntaxKind.ThrowStatement, 'throw'], [ts.SyntaxKind.ContinueStatement, 'continue'],
    [ts.SyntaxKind.LabeledStatement, 'label'], [ts.SyntaxKind.ClassDeclaration, 'class'], [ts.SyntaxKind.ClassExpression, 'class'],
    [ts.SyntaxKind.NewExpression, 'new'], [ts.SyntaxKind.RegularExpressionLiteral, 'regular expression'],
    [ts.SyntaxKind.AwaitExpression, 'await'], [ts.SyntaxKind.YieldExpression, 'yield'], [ts.SyntaxKind.ArrowFunction, 'arrow function'],
    [ts.SyntaxKind.FunctionExpression, 'function expression'],
  ]);
  const visit = (node: ts.Node): void => {
    const what = forbidden.get(node.kind);
    if (what) refuse(node, what);
    if ((ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node))
      && [ts.SyntaxKind.PlusPlusToken, ts.SyntaxKind.MinusMinusToken, ts.SyntaxKind.TildeToken].includes(node.operator)) refuse(node, ts.tokenToString(node.operator)!);
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword) refuse(node, 'in');
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('the deployed onSubscribe handler code', () => {
  it('uses no construct APPSYNC_JS refuses', () => {
    expect(unsupportedConstructs(code)).toEqual([]);
  });

  it('the check itself finds them', () => {
    expect(unsupportedConstructs('for (let i = 0; i < 2; i++) {} try { throw 1 } catch {} x = ~y; k in o; new Date(); [].map(() => 1); /a/')).toEqual(
      expect.arrayContaining(['for(;;) at 1', '++ at 1', 'try at 1', 'throw at 1', '~ at 1', 'in at 1', 'new at 1', 'arrow function at 1', 'regular expression at 1']),
    );
  });

  it('imports only the runtime utilities, exports only onSubscribe, and fits AppSync’s size limit', () => {
    expect(code.match(/^import .*$/gm)).toEqual(['import { util } from "@aws-appsync/utils";']);
    expect(code.match(/^export .*$/gm)).toEqual(['export function onSubscribe(ctx) {']);
    expect(code.length).toBeLessThan(MAX_HANDLER_CODE_CHARS);
    expect(code).toContain(JSON.stringify(POLICY.adminClaim));
    expect(code).not.toContain(PROJECT_ROOT); // the same code from every checkout: no spurious namespace updates
  });

  class Unauthorized extends Error {}
  const util = { base64Encode: utf8Base64, unauthorized: () => { throw new Unauthorized(); } };
  const { onSubscribe } = new Function('util', `${code.replace(/^import .*$/m, '').replace('export function', 'function')}\nreturn { onSubscribe };`)(util) as {
    onSubscribe(ctx: unknown): void;
  };
  const allows = (channel: string, sub: string, claims: Record<string, unknown> = {}) => {
    const ctx = { identity: { sub, issuer: 'https://issuer', claims: { sub, aud: 'ai-jobs-api', ...claims } }, info: { channel: { path: channel, segments: channelSegments(channel, { wildcard: true }) } } };
    try {
      onSubscribe(ctx);
      return true;
    } catch (err) {
      if (err instanceof Unauthorized) return false;
      throw err;
    }
  };

  it.each([
    ['the owner, their job', () => allows(channelFor('auth0|123', newJobId()), 'auth0|123'), true],
    ['the owner, all their jobs', () => allows(ownerChannels(ownerSegmentOfSubjectSync('auth0|123')), 'auth0|123'), true],
    ['another user', () => allows(channelFor('auth0|123', newJobId()), 'auth0|456'), false],
    ['an admin of this stage', () => allows(channelFor('auth0|123', newJobId()), 'ops', { roles: ['ops-admin'] }), true],
    ['the default admin group on a stage that renamed it', () => allows(channelFor('auth0|123', newJobId()), 'ops', { 'cognito:groups': ['SUPER_ADMIN'] }), false],
    ['a token for another audience', () => allows(channelFor('u', newJobId()), 'u', { aud: 'console' }), false],
    ['the firehose', () => allows('/jobs/*', 'ops', { roles: ['ops-admin'] }), false],
  ])('%s → allowed: %s', (_, run, expected) => {
    expect(run()).toBe(expected);
  });

  it('refuses a caller without identity (no token reached it)', () => {
    expect(() => onSubscribe({ identity: null, info: { channel: { path: '/jobs/x/y', segments: ['jobs', 'x', 'y'] } } })).toThrow(Unauthorized);
  });
});
