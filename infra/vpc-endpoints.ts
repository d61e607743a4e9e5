/**
 * Interface VPC endpoints for the AWS APIs the functions call from the private subnets, a stage option
 * (`vpcEndpoints`). Without them those calls leave through the NAT gateways, which bill per GB processed;
 * with them each endpoint bills per AZ-hour instead. The NAT gateways stay either way: the consumers call the
 * AI provider on the internet. docs/deploy.md "Cost" has the arithmetic.
 *
 * Only APIs our code calls need one: SQS (send, change visibility, stats), KMS (credential envelopes),
 * Secrets Manager (database and platform secrets) and EventBridge (PutEvents). Logs, metrics (EMF in the
 * logs) and X-Ray traces leave through the Lambda service, not the function's network interface, so
 * CloudWatch Logs, monitoring and X-Ray endpoints would cost without carrying any of our traffic.
 */
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';

/** Endpoint id → the AWS service it reaches privately. */
export const INTERFACE_ENDPOINT_SERVICES: Readonly<Record<string, ec2.InterfaceVpcEndpointAwsService>> = {
  Sqs: ec2.InterfaceVpcEndpointAwsService.SQS,
  Kms: ec2.InterfaceVpcEndpointAwsService.KMS,
  SecretsManager: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
  EventBridge: ec2.InterfaceVpcEndpointAwsService.EVENTBRIDGE,
};

export interface ApiEndpointsProps {
  vpc: ec2.IVpc;
  /** The functions' security group: the only one admitted on 443. */
  clients: ec2.ISecurityGroup;
}

/** One interface endpoint per {@link INTERFACE_ENDPOINT_SERVICES} entry, with private DNS, in the Lambda subnets. */
export class ApiEndpoints extends Construct {
  readonly endpoints: ec2.InterfaceVpcEndpoint[];
  /** The endpoints' security group: admits `clients` on 443 (and whoever else is added, e.g. the secret's rotation). */
  readonly securityGroup: ec2.SecurityGroup;

  constructor(scope: Construct, id: string, props: ApiEndpointsProps) {
    super(scope, id);
    const securityGroup = this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc, description: 'AWS API interface endpoints (HTTPS from the Lambdas only)', allowAllOutbound: false,
    });
    securityGroup.addIngressRule(props.clients, ec2.Port.tcp(443), 'Lambdas to AWS APIs');
    this.endpoints = Object.entries(INTERFACE_ENDPOINT_SERVICES).map(([name, service]) =>
      props.vpc.addInterfaceEndpoint(name, {
        service,
        privateDnsEnabled: true,
        open: false,
        securityGroups: [securityGroup],
        subnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      }));
  }
}
