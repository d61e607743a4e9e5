/**
 * bench:peers' CPU meter over a process tree whose members come and go (PostgreSQL's autovacuum workers): the CPU
 * of children that ended between two readings is counted through their parent's children time, not lost.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { processTree, processTreeGroup, startCpuMeter } from '../../bench/peers/cpu.ts';

describe.runIf(process.platform === 'linux')('the CPU meter of a process tree', () => {
  it('counts the CPU of members that started and ended during the run', async () => {
    // Two subshells (children of bash) each count to 100,000 and end; bash waits for them, says so and idles.
    const script = 'read go; for i in 1 2; do (x=0; while [ $x -lt 100000 ]; do x=$((x+1)); done); done; echo done; sleep 60';
    const bash = spawn('bash', ['-c', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const meter = startCpuMeter({ tree: processTreeGroup(bash.pid!), live: () => processTree(bash.pid!) });
      bash.stdin.write('go\n');
      const [line] = (await once(bash.stdout, 'data')) as [Buffer];
      expect(line.toString().trim()).toBe('done');
      const perJob = meter.stop(1);
      // The subshells' CPU (about half a second between them here) is in the tree's figure only.
      expect(perJob.tree! - perJob.live!).toBeGreaterThan(100);
      expect(perJob.live!).toBeLessThan(perJob.tree!);
    } finally {
      bash.kill();
    }
  });
});
