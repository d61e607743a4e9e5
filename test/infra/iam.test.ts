/**
 * Least privilege: each function may touch only the queues, keys and secrets it uses (infra/app-functions.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { logicalIdOf, resourcesFor, statementsOfRole, synthStack, type Statement, type Synthesized } from './synth.ts';

/** What active tracing grants every function: X-Ray supports no resource-level permissions for these. */
const XRAY_ACTIONS = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'];

let s: Synthesized;
let ids: { queues: string[]; dlqs: string[]; key: string; platformSecret: string; bus: string };

beforeAll(() => {
  s = synthStack();
  const q = s.stack.node.findChild('Queues');
  ids = {
    queues: ['InteractiveQueue', 'BackgroundQueue'].map((id) => logicalIdOf(q.node.findChild(id))),
    dlqs: ['InteractiveDeadLetterQueue', 'BackgroundDeadLetterQueue'].map((id) => logicalIdOf(q.node.findChild(id))),
    key: logicalIdOf(s.stack.node.findChild('CredentialsKey')),
    platformSecret: logicalIdOf(s.stack.node.findChild('PlatformProviderKeys')),
    bus: logicalIdOf(s.stack.node.findChild('DomainEvents')),
  };
}, 600_000);

const statements = (fn: NodejsFunction): Statement[] => statementsOfRole(s, fn.role!);
/** action → sorted resource ids, for actions with `prefix`. */
const grants = (fn: NodejsFunction, prefix: string): Record<string, string[]> =>
  Object.fromEntries([...resourcesFor(statements(fn), prefix)].map(([action, set]) => [action, [...set].sort()]));
const sorted = (list: string[]) => [...list].sort();

describe('IAM scoping of the functions', () => {
  it('lets the user API send to the two job queues only (eager dispatch), never to a dead-letter queue', () => {
    expect(grants(s.stack.functions.apiUser, 'sqs:')).toEqual({ 'sqs:SendMessage': sorted(ids.queues) });
  });

  it('lets the admin API send to the job queues (retry) and read queue attributes of queues and DLQs (stats)', () => {
    expect(grants(s.stack.functions.apiAdmin, 'sqs:')).toEqual({
      'sqs:SendMessage': sorted(ids.queues),
      'sqs:GetQueueAttributes': sorted([...ids.queues, ...ids.dlqs]),
    });
  });

  it('gives each consumer its own queue only, through the event source mapping, and no send permission', () => {
    const { interactive, background } = s.stack.functions.consumers;
    const consume = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];
    expect(grants(interactive, 'sqs:')).toEqual(Object.fromEntries(consume.map((a) => [a, [ids.queues[0]]])));
    expect(grants(background, 'sqs:')).toEqual(Object.fromEntries(consume.map((a) => [a, [ids.queues[1]]])));
  });

  it('lets the dispatcher send to both job queues and put events on the bus, nothing else', () => {
    const { dispatcher } = s.stack.functions;
    expect(grants(dispatcher, 'sqs:')).toEqual({ 'sqs:SendMessage': sorted(ids.queues) });
    expect(grants(dispatcher, 'events:')).toEqual({ 'events:PutEvents': [ids.bus] });
  });

  it('lets the reaper receive and hide messages of the dead-letter queues only', () => {
    expect(grants(s.stack.functions.reaper, 'sqs:')).toEqual({
      'sqs:ReceiveMessage': sorted(ids.dlqs),
      'sqs:ChangeMessageVisibility': sorted(ids.dlqs),
    });
  });

  it('lets only the user API generate data keys and only the consumers decrypt with the credentials key', () => {
    const f = s.stack.functions;
    expect(grants(f.apiUser, 'kms:')).toEqual({ 'kms:GenerateDataKey': [ids.key] });
    expect(grants(f.consumers.interactive, 'kms:')).toEqual({ 'kms:Decrypt': [ids.key] });
    expect(grants(f.consumers.background, 'kms:')).toEqual({ 'kms:Decrypt': [ids.key] });
    for (const fn of [f.apiAdmin, f.dispatcher, f.reaper, f.migrate]) expect(grants(fn, 'kms:')).toEqual({});
  });

  it('lets every function read the database secret, and only the consumers the platform provider secret', () => {
    const f = s.stack.functions;
    const dbSecret = logicalIdOf(s.stack.node.findChild('Data').node.findChild('Secret').node.findChild('Attachment'));
    for (const fn of [f.apiUser, f.apiAdmin, f.dispatcher, f.reaper, f.migrate]) {
      expect(grants(fn, 'secretsmanager:')).toEqual({ 'secretsmanager:GetSecretValue': [dbSecret] });
    }
    for (const fn of [f.consumers.interactive, f.consumers.background]) {
      expect(grants(fn, 'secretsmanager:')).toEqual({ 'secretsmanager:GetSecretValue': sorted([dbSecret, ids.platformSecret]) });
    }
  });

  it('gives the migration function nothing beyond the database secret (and X-Ray tracing)', () => {
    const actions = statements(s.stack.functions.migrate).flatMap((st) => st.actions).filter((a) => !XRAY_ACTIONS.includes(a));
    expect(actions).toEqual(['secretsmanager:GetSecretValue']);
  });

  it('grants no wildcard action and no wildcard resource to any function, except the X-Ray actions, which have no resources', () => {
    const f = s.stack.functions;
    for (const fn of [f.apiUser, f.apiAdmin, f.consumers.interactive, f.consumers.background, f.dispatcher, f.reaper, f.migrate]) {
      expect(statements(fn).filter((st) => st.actions.some((a) => a.startsWith('xray:'))), fn.node.id)
        .toEqual([{ actions: XRAY_ACTIONS, resources: ['"*"'] }]);
      for (const st of statements(fn).filter((x) => !x.actions.some((a) => a.startsWith('xray:')))) {
        expect(st.actions.some((a) => a.includes('*')), `${fn.node.id}: ${st.actions.join(',')}`).toBe(false);
        expect(st.resources.some((r) => r.includes('"*"')), `${fn.node.id}: ${st.resources.join(',')}`).toBe(false);
      }
    }
  });
});
