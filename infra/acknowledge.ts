/**
 * cdk-nag (AwsSolutions pack, test/infra/cdk-nag.test.ts) findings we accept, acknowledged on the construct
 * they concern through CDK's `Validations` API, so the acknowledgement travels with the construct and a new
 * construct with the same weakness is still reported. Each call names the exact rule (with its finding, for
 * rules that report several) and says in one line why the finding does not apply or is accepted.
 */
import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Acknowledges cdk-nag rule `rule` on `scope` and everything under it, for `reason`. */
export function acknowledge(scope: IConstruct, rule: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: rule, reason });
}

/** The finding ids of cdk-nag's IAM4 rule for the AWS managed policies CDK attaches to Lambda roles. */
export const LAMBDA_MANAGED_POLICY_FINDINGS = {
  basic: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
  vpc: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
} as const;
