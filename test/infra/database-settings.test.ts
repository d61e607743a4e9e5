/**
 * What the stack pins of the database and its proxy, because the code relies on it: the server settings in
 * parameter groups equal to what the deploy's preflight checks (lib/db/server-settings.ts), the proxy's idle
 * client timeout, and the session-pinning filter that the outbox claims' `SET TRANSACTION` needs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROXY_IDLE_CLIENT_TIMEOUT_SECONDS } from '../../infra/data-layer.ts';
import {
  CHARACTER_SET, CLUSTER_PARAMETERS, COLLATION, INSTANCE_PARAMETERS, MAX_ALLOWED_PACKET_BYTES, SERVER_TIME_ZONE, SQL_MODE,
  TRANSACTION_ISOLATION,
} from '../../lib/db/server-settings.ts';
import { DEFAULT_DISPATCH_POLICY } from '../../lib/outbox/dispatcher-deps.ts';
import { synthStack, type Synthesized } from './synth.ts';

type Resource = { Properties: Record<string, any> };
const resources = (s: Synthesized, type: string) => Object.values(s.template.findResources(type)) as Resource[];
const idOf = (ref: unknown) => (ref as { Ref?: string }).Ref;

/**
 * Aurora MySQL 3's parameters by level, as AWS lists them ("Aurora MySQL configuration parameters",
 * https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraMySQL.Reference.ParameterGroups.html):
 * the ones the stack sets, each in the group of its level (a cluster-level one is not found in an instance's group).
 */
const AURORA_CLUSTER_LEVEL = ['time_zone', 'character_set_server', 'collation_server'];
const AURORA_INSTANCE_LEVEL = ['sql_mode', 'transaction_isolation', 'max_allowed_packet'];

let dev: Synthesized;
let prod: Synthesized;
beforeAll(() => {
  dev = synthStack();
  prod = synthStack({ stage: 'prod', jwtIssuer: 'https://login.example.org/', alarmEmail: 'ops@example.org' });
}, 600_000);

describe('database parameter groups', () => {
  it('pin the server settings the preflight checks, each at its Aurora MySQL 3 level', () => {
    expect(CLUSTER_PARAMETERS).toEqual({ time_zone: SERVER_TIME_ZONE, character_set_server: CHARACTER_SET, collation_server: COLLATION });
    expect(INSTANCE_PARAMETERS).toEqual({
      sql_mode: SQL_MODE, transaction_isolation: TRANSACTION_ISOLATION, max_allowed_packet: String(MAX_ALLOWED_PACKET_BYTES),
    });
    expect(Object.keys(CLUSTER_PARAMETERS).sort()).toEqual([...AURORA_CLUSTER_LEVEL].sort());
    expect(Object.keys(INSTANCE_PARAMETERS).sort()).toEqual([...AURORA_INSTANCE_LEVEL].sort());
    expect(SQL_MODE).toBe('ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION');
  });

  it('are the cluster\'s and every instance\'s, in dev and in prod (writer and reader)', () => {
    for (const stage of [dev, prod]) {
      const clusterGroups = stage.template.findResources('AWS::RDS::DBClusterParameterGroup');
      expect(Object.keys(clusterGroups)).toHaveLength(1);
      const [clusterGroupId, clusterGroup] = Object.entries(clusterGroups)[0]! as [string, Resource];
      expect(clusterGroup.Properties).toMatchObject({ Family: 'aurora-mysql8.0', Parameters: CLUSTER_PARAMETERS });
      const [cluster] = resources(stage, 'AWS::RDS::DBCluster');
      expect(idOf(cluster!.Properties.DBClusterParameterGroupName)).toBe(clusterGroupId);

      const instanceGroups = stage.template.findResources('AWS::RDS::DBParameterGroup');
      expect(Object.keys(instanceGroups)).toHaveLength(1);
      const [instanceGroupId, instanceGroup] = Object.entries(instanceGroups)[0]! as [string, Resource];
      expect(instanceGroup.Properties).toMatchObject({ Family: 'aurora-mysql8.0', Parameters: INSTANCE_PARAMETERS });
      const instances = resources(stage, 'AWS::RDS::DBInstance');
      expect(instances.length).toBe(stage === prod ? 2 : 1);
      for (const instance of instances) expect(idOf(instance.Properties.DBParameterGroupName)).toBe(instanceGroupId);
    }
  });
});

/** lib/ source files (production code) whose text contains `needle`. */
function libFilesContaining(needle: RegExp): string[] {
  const lib = fileURLToPath(new URL('../../lib', import.meta.url));
  return readdirSync(lib, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.parentPath.includes('generated'))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((file) => needle.test(readFileSync(file, 'utf8')));
}

describe('RDS Proxy', () => {
  const targetGroup = (s: Synthesized) => resources(s, 'AWS::RDS::DBProxyTargetGroup')[0]!.Properties.ConnectionPoolConfigurationInfo;

  it('keeps the EXCLUDE_VARIABLE_SETS filter while lib/ sends SET TRANSACTION at next-transaction scope, which the proxy does not track', () => {
    const senders = libFilesContaining(/SET TRANSACTION ISOLATION LEVEL/);
    // Today: the outbox claims (BEGIN_READ_COMMITTED). Were it gone, the filter could go too (docs/deploy.md).
    expect(senders.map((f) => path.basename(f))).toContain('outbox-claims.ts');
    for (const stage of [dev, prod]) expect(targetGroup(stage).SessionPinningFilters).toEqual(['EXCLUDE_VARIABLE_SETS']);
  });

  it('closes idle client connections after an explicit timeout, longer than a held outbox claim may stay idle', () => {
    const proxy = resources(dev, 'AWS::RDS::DBProxy')[0]!;
    expect(proxy.Properties.IdleClientTimeout).toBe(PROXY_IDLE_CLIENT_TIMEOUT_SECONDS);
    expect(PROXY_IDLE_CLIENT_TIMEOUT_SECONDS * 1000).toBeGreaterThan(DEFAULT_DISPATCH_POLICY.lockTtlMs);
    expect(PROXY_IDLE_CLIENT_TIMEOUT_SECONDS).toBeLessThan(1800);
  });
});
