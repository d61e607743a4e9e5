/**
 * cdk-nag's AwsSolutions pack on the synthesized stack (dev, and prod with every option on): zero findings that
 * are not acknowledged, and every acknowledgement names its rule and a reason (infra/acknowledge.ts).
 * Findings on the stack before this check existed: docs/deploy.md "What we checked without AWS, and how".
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, describe, expect, it } from 'vitest';
import { AiJobsStack } from '../../infra/ai-jobs-stack.ts';
import { loadStageConfig } from '../../infra/config.ts';
import { CDK_JSON } from './synth.ts';

interface Violation { ruleName: string; violatingConstructs: { constructPath: string }[] }
const outdirs: string[] = [];
afterAll(() => outdirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Synthesizes the stage with the AwsSolutions pack; returns its findings as `rule path` lines, and the stack. */
function nag(context: Record<string, unknown>): { findings: string[]; stack: AiJobsStack } {
  const app = new App({ outdir: newOutdir(), context: { ...CDK_JSON.context, ...context, 'aws:cdk:bundling-stacks': [] } });
  const config = loadStageConfig(app.node);
  const stack = new AiJobsStack(app, `AiJobs-${config.stage}`, { config });
  return { findings: findingsOf(app), stack };
}

function newOutdir(): string {
  const outdir = mkdtempSync(path.join(tmpdir(), 'cdk-nag-'));
  outdirs.push(outdir);
  return outdir;
}

/** Runs the AwsSolutions pack on `app` as a validation plugin and reads its report. */
function findingsOf(app: App): string[] {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  try {
    app.synth();
  } catch (err) {
    // Findings fail the synth; the report below lists them.
    if ((err as Error).name !== 'ValidationFailed' && !/Validation failed/.test((err as Error).message)) throw err;
  }
  const report = path.join(app.outdir, 'validation-report.json');
  if (!existsSync(report)) return [];
  const { pluginReports } = JSON.parse(readFileSync(report, 'utf8')) as { pluginReports: { violations: Violation[] }[] };
  return pluginReports.flatMap((r) => r.violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} ${c.constructPath}`)));
}

function acknowledgements(root: IConstruct): { path: string; id: string; reason: string }[] {
  return root.node.findAll().flatMap((c) => c.node.metadata
    .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
    .flatMap((m) => Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({ path: c.node.path, id, reason }))));
}

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged in dev', { timeout: 600_000 }, () => {
    expect(nag({}).findings).toEqual([]);
  });

  it('finds nothing unacknowledged in prod with CORS, pinned AZs and VPC endpoints', { timeout: 600_000 }, () => {
    const { findings, stack } = nag({ stage: 'prod', jwtIssuer: 'https://login.example.org/', corsOrigins: 'https://app.example.org', availabilityZones: 'us-east-1a,us-east-1b', vpcEndpoints: true });
    expect(findings).toEqual([]);
    const acks = acknowledgements(stack).filter((ack) => ack.id.includes('AwsSolutions'));
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.id, ack.path).toMatch(/AwsSolutions-[A-Z]+\d+/);
      expect(ack.reason.length, `${ack.path} ${ack.id}`).toBeGreaterThan(20);
    }
  });

  it('reports what is not acknowledged (the check, as wired here, is live)', { timeout: 600_000 }, () => {
    const app = new App({ outdir: newOutdir() });
    new sqs.Queue(new Stack(app, 'Probe'), 'Unsafe', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    expect(findingsOf(app).some((f) => f.startsWith('AwsSolutions-SQS') && f.includes('/Unsafe/'))).toBe(true);
  });
});
