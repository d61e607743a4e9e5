/**
 * CDK app entry (`cdk.json`: `npx tsx infra/app.ts`). One stack per invocation, for the stage named by the
 * `stage` context key: `npx cdk synth` (dev), `npx cdk deploy -c stage=prod`. No `env`: synthesis needs no AWS
 * credentials and makes no lookups.
 */
import { App } from 'aws-cdk-lib';
import { AiJobsStack } from './ai-jobs-stack.ts';
import { loadStageConfig } from './config.ts';

const app = new App();
const config = loadStageConfig(app.node);
new AiJobsStack(app, `AiJobs-${config.stage}`, {
  config,
  description: `AI job engine (${config.stage}): HTTP API, SQS FIFO job queues, consumers, outbox dispatcher, Aurora MySQL`,
});
app.synth();
