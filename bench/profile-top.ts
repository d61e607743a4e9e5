/**
 * `npm run bench:profile-top -- <file.cpuprofile> [N] [jobs]`: where a V8 CPU profile (from `--cpu-prof`, or
 * bench/peers.ts with BENCH_CPU_PROF) spends its time. Prints the top N (default 15) functions by self time and
 * by inclusive time, then the same two views grouped by origin: `pkg:<name>` for node_modules/<name> (scoped
 * names kept whole), `ours:<path>` for this repository's files, `node:` for Node's internals, `wasm` for
 * WebAssembly (here: Prisma's query compiler), `(native)` for built-ins without a script (socket writes,
 * microtask runs), and V8's own entries ((garbage collector), (program), (idle)). Inclusive figures of `node:`
 * and `(native)` are near 100% (every async stack starts there) and say little. Last, self time by origin with
 * the time of `node:` and `(native)` frames charged to the nearest caller of another origin (JSON.parse under
 * the mariadb driver counts as `pkg:mariadb`, an HMAC under the AWS SDK's signer as `pkg:@smithy/signature-v4`);
 * what has no such caller (socket writes of the event loop, timers) stays `node:`/`(native)`. Then the same
 * charged self time by concern ({@link concernOf}: SigV4, the openai SDK, SQL, Prisma, realtime, …). With `jobs`,
 * each line also gives ms per job (the profile's window held that many jobs).
 *
 * Time per sample is the gap to the next sample (the last one gets the mean gap). Inclusive time counts a
 * sample once per function (or group) on its stack, however often it recurs. Percentages are of busy time
 * (everything but (idle)).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where a frame's code comes from (see the module comment). */
export function originOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:';
  if (url.startsWith('wasm://')) return 'wasm';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(path);
  if (pkg) return `pkg:${pkg[1]}`;
  return path.startsWith(REPO_ROOT) ? `ours:${path.slice(REPO_ROOT.length)}` : path;
}

function frameName(f: CallFrame): string {
  const origin = f.url.startsWith('node:') || f.url.startsWith('wasm://') ? f.url : originOf(f.url, f.functionName).replace(/^ours:/, '');
  const where = f.url ? ` ${origin}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'}${where}`;
}

export interface Totals { self: Map<string, number>; inclusive: Map<string, number>; busyUs: number; totalUs: number }

/** Self and inclusive microseconds per key, `keyOf` mapping a frame to a function or a group. */
export function tally(profile: CpuProfile, keyOf: (f: CallFrame) => string): Totals {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const gaps = profile.timeDeltas.slice(1);
  const meanGap = gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : 0;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busyUs = 0;
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i + 1] ?? meanGap;
    const node = byId.get(id);
    if (!node) return;
    totalUs += us;
    if (node.callFrame.functionName === '(idle)') return;
    busyUs += us;
    const key = keyOf(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.functionName === '(root)') continue;
      const k = keyOf(frame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
  });
  return { self, inclusive, busyUs, totalUs };
}

const runtimeOrigin = (origin: string) => origin === 'node:' || origin === '(native)';

/**
 * Self time by origin, the time of `node:` and `(native)` frames charged to the nearest caller of another origin
 * (see the module comment); V8's own entries ((garbage collector), (program)) stay as they are.
 */
export function selfByCallerOrigin(profile: CpuProfile): Totals {
  const chargeOf = selfByCallerOriginKeys(profile);
  const pseudo: CpuProfile = {
    ...profile,
    nodes: profile.nodes.map((n) => ({ ...n, callFrame: { ...n.callFrame, url: `charged:${n.id}` } })),
  };
  return tally(pseudo, (f) => (f.url.startsWith('charged:') ? chargeOf(Number(f.url.slice(8))) : originOf(f.url, f.functionName)));
}

/** The origin a node's self time is charged to (see {@link selfByCallerOrigin}). */
function selfByCallerOriginKeys(profile: CpuProfile): (id: number) => string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const charged = new Map<number, string>();
  const chargeOf = (id: number): string => {
    const known = charged.get(id);
    if (known !== undefined) return known;
    const f = byId.get(id)!.callFrame;
    const own = originOf(f.url, f.functionName);
    const up = parent.get(id);
    const key = !runtimeOrigin(own) || up === undefined || byId.get(up)!.callFrame.functionName === '(root)' ? own : chargeOf(up);
    const result = runtimeOrigin(key) ? own : key;
    charged.set(id, result);
    return result;
  };
  return chargeOf;
}

/**
 * What a sample's time is spent on, from its stack (leaf first) and the origin its time is charged to: the first
 * rule that matches wins, so SigV4 (signing a request, or the local hub checking one) is counted apart from the
 * rest of the AWS SDK and of realtime publishing. Async continuations lose their callers (a hub check resumed in a
 * microtask no longer shows the hub), so the realtime lines undercount and `node:`/`(native)` keep the rest.
 */
export function concernOf(stack: readonly CallFrame[], charged: string): string {
  const origins = stack.map((f) => originOf(f.url, f.functionName));
  const names = stack.map((f) => `${f.functionName} ${f.url}`);
  if (charged === '(garbage collector)' || charged === '(program)') return charged;
  if (origins.includes('pkg:@smithy/signature-v4') || names.some((n) => /^(Hash|reset|Sha256Node|createHash|create) .*(@smithy\/core|config\/sha256)/.test(n))) return 'SigV4 (sign, check)';
  if (origins.some((o) => o.startsWith('ours:lib/dev/local-runtime/realtime-hub'))) return 'realtime hub (local AppSync stand-in)';
  if (charged === 'pkg:openai' || charged === 'pkg:eventsource-parser' || charged === 'ours:lib/ai/chat-stream.ts') {
    return 'provider call (openai SDK, the event stream read and folded)';
  }
  if (origins.some((o) => o.startsWith('ours:lib/realtime/'))) return 'realtime publish';
  if (charged === 'pkg:mariadb' || /^ours:lib\/db\/(sql|large-statements|text-guard)/.test(charged)) return 'SQL (mariadb driver, statement text)';
  if (charged === 'wasm' || charged.startsWith('pkg:@prisma')) return 'Prisma (query compiler, client)';
  if (charged.startsWith('pkg:@smithy') || charged.startsWith('pkg:@aws-sdk')) return 'AWS SDK (serialize, HTTP)';
  if (charged === 'pkg:zod') return 'zod';
  if (charged === 'pkg:jose') return 'JWT (jose)';
  if (charged.includes('http-gateway')) return 'HTTP gateway';
  return charged.startsWith('ours:') ? 'ours (other)' : charged;
}

/** Self time by {@link concernOf}. */
export function selfByConcern(profile: CpuProfile): Totals {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const charged = selfByCallerOriginKeys(profile);
  const pseudo: CpuProfile = { ...profile, nodes: profile.nodes.map((n) => ({ ...n, callFrame: { ...n.callFrame, url: `concern:${n.id}` } })) };
  return tally(pseudo, (f) => {
    if (!f.url.startsWith('concern:')) return originOf(f.url, f.functionName);
    const id = Number(f.url.slice(8));
    const stack: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame);
    return concernOf(stack, charged(id));
  });
}

function printTop(title: string, values: Map<string, number>, busyUs: number, n: number, jobs?: number): void {
  console.log(title);
  const rows = [...values].sort((a, b) => b[1] - a[1]).slice(0, n);
  rows.forEach(([key, us], i) => {
    const perJob = jobs ? ` ${(us / 1000 / jobs).toFixed(3).padStart(7)} ms/job` : '';
    console.log(`  ${String(i + 1).padStart(2)}. ${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / busyUs).toFixed(1).padStart(5)}%${perJob}  ${key}`);
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, count, jobCount] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npm run bench:profile-top -- <file.cpuprofile> [N] [jobs]');
    process.exit(2);
  }
  const n = Number(count ?? 15);
  const jobs = jobCount ? Number(jobCount) : undefined;
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byFunction = tally(profile, frameName);
  const byOrigin = tally(profile, (f) => originOf(f.url, f.functionName));
  const perJob = jobs ? `, ${(byFunction.busyUs / 1000 / jobs).toFixed(2)} ms busy per job (${jobs} jobs)` : '';
  console.log(`${file}: ${(byFunction.totalUs / 1000).toFixed(0)} ms sampled, ${(byFunction.busyUs / 1000).toFixed(0)} ms busy (not idle), ${profile.samples.length} samples${perJob}`);
  printTop(`top ${n} functions by self time:`, byFunction.self, byFunction.busyUs, n, jobs);
  printTop(`top ${n} functions by inclusive time:`, byFunction.inclusive, byFunction.busyUs, n, jobs);
  printTop(`top ${n} origins by self time (pkg:<node_modules package>, ours:<file>, node:, V8):`, byOrigin.self, byOrigin.busyUs, n, jobs);
  printTop(`top ${n} origins by inclusive time:`, byOrigin.inclusive, byOrigin.busyUs, n, jobs);
  const charged = selfByCallerOrigin(profile);
  printTop(`top ${n} origins by self time, node: and (native) charged to their nearest other caller:`, charged.self, charged.busyUs, n, jobs);
  const concerns = selfByConcern(profile);
  printTop(`top ${n} concerns by self time (charged as above):`, concerns.self, concerns.busyUs, n, jobs);
}
