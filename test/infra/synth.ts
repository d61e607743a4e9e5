/**
 * Synthesizes the stack in-process for assertions, with cdk.json's context (what `cdk synth` sees) plus
 * overrides, and bundling skipped (`aws:cdk:bundling-stacks: []`) so a synth takes seconds. One synth per
 * distinct context per test process.
 */
import { readFileSync } from 'node:fs';
import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { AiJobsStack } from '../../infra/ai-jobs-stack.ts';
import { loadStageConfig, type StageConfig } from '../../infra/config.ts';

export interface Synthesized {
  app: App;
  stack: AiJobsStack;
  config: StageConfig;
  template: Template;
}

export const CDK_JSON = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  app: string;
  context: Record<string, unknown>;
};

const cache = new Map<string, Synthesized>();

export function synthStack(context: Record<string, unknown> = {}): Synthesized {
  const key = JSON.stringify(context);
  const cached = cache.get(key);
  if (cached) return cached;
  const app = new App({ context: { ...CDK_JSON.context, ...context, 'aws:cdk:bundling-stacks': [] } });
  const config = loadStageConfig(app.node);
  const stack = new AiJobsStack(app, `AiJobs-${config.stage}`, { config });
  const result = { app, stack, config, template: Template.fromStack(stack) };
  cache.set(key, result);
  return result;
}

/** The logical id of a construct's CloudFormation resource. */
export function logicalIdOf(construct: IConstruct): string {
  return Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement);
}

/** `{Ref: id}` or `{'Fn::GetAtt': [id, attr]}` → `id`; anything else → its JSON. */
export function referencedId(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') return v.Ref;
    const getAtt = v['Fn::GetAtt'];
    if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  }
  return JSON.stringify(value);
}

export interface Statement {
  actions: string[];
  resources: string[];
}

/** Every statement of the inline policies attached to `role`, resources as logical ids. */
export function statementsOfRole(s: Synthesized, role: IConstruct): Statement[] {
  const roleId = logicalIdOf(role);
  const policies = Object.values(s.template.findResources('AWS::IAM::Policy')) as {
    Properties: { Roles: unknown[]; PolicyDocument: { Statement: Record<string, unknown>[] } };
  }[];
  return policies
    .filter((p) => p.Properties.Roles.some((r) => referencedId(r) === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement)
    .map((st) => ({
      actions: ([] as unknown[]).concat(st.Action).map(String),
      resources: ([] as unknown[]).concat(st.Resource).map(referencedId),
    }));
}

/** The resources (logical ids) on which `role` may perform any action starting with `prefix`. */
export function resourcesFor(statements: Statement[], prefix: string): Map<string, Set<string>> {
  const byAction = new Map<string, Set<string>>();
  for (const st of statements) {
    for (const action of st.actions.filter((a) => a.startsWith(prefix))) {
      const set = byAction.get(action) ?? new Set<string>();
      st.resources.forEach((r) => set.add(r));
      byAction.set(action, set);
    }
  }
  return byAction;
}
