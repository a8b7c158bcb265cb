// Summarizes a V8 .cpuprofile (from BENCH_CPU_PROF=1 or `node --cpu-prof`): the functions with the
// most self time, the most inclusive time, and self time by package, so a hot spot can be cited
// with numbers. Usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const totalHits = prof.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0);
const msPerHit = (prof.endTime - prof.startTime) / 1000 / Math.max(1, totalHits);
const byId = new Map(prof.nodes.map((n) => [n.id, n]));

function short(url: string): string {
  const i = url.lastIndexOf('node_modules/');
  if (i >= 0) return url.slice(i + 'node_modules/'.length);
  const d = url.indexOf('/dist/');
  if (d >= 0) return url.slice(d + 1);
  return url.replace(/^file:\/\//, '') || '(native)';
}
function keyOf(n: ProfileNode): string {
  return `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
}
function pkgOf(n: ProfileNode): string {
  const url = n.callFrame.url;
  const i = url.lastIndexOf('node_modules/');
  if (i >= 0) {
    const rest = url.slice(i + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? '?');
  }
  if (url.includes('/dist/')) return `toolgate ${url.slice(url.indexOf('/dist/') + 6).split('/').slice(0, -1).join('/') || '.'}`;
  if (url.startsWith('node:')) return 'node core';
  const name = n.callFrame.functionName;
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)' || name === '(program)' || name === '(root)') return name;
  return url ? 'other' : '(native/V8)';
}

const self = new Map<string, number>();
const pkg = new Map<string, number>();
for (const n of prof.nodes) {
  const h = n.hitCount ?? 0;
  if (!h) continue;
  self.set(keyOf(n), (self.get(keyOf(n)) ?? 0) + h);
  pkg.set(pkgOf(n), (pkg.get(pkgOf(n)) ?? 0) + h);
}
// Inclusive time per function: each sample's stack counts a function once.
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
for (const n of prof.nodes) {
  const h = n.hitCount ?? 0;
  if (!h) continue;
  const seen = new Set<string>();
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
    const k = keyOf(byId.get(id) as ProfileNode);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + h);
  }
}
const idle = [...prof.nodes].filter((n) => n.callFrame.functionName === '(idle)').reduce((s, n) => s + (n.hitCount ?? 0), 0);
const busy = totalHits - idle;
const pct = (h: number) => `${((100 * h) / Math.max(1, busy)).toFixed(1).padStart(5)}%`;
const print = (title: string, m: Map<string, number>, filter: (k: string) => boolean = () => true) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, h] of [...m].filter(([k]) => filter(k)).sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${pct(h)} ${(h * msPerHit).toFixed(0).padStart(7)} ms  ${k}\n`);
  }
};
process.stdout.write(`${file}: ${((prof.endTime - prof.startTime) / 1e6).toFixed(1)} s profiled, busy ${((busy * msPerHit) / 1000).toFixed(1)} s (percentages are of busy time)\n`);
print('Self time by package', pkg, (k) => k !== '(idle)');
print('Self time by function', self, (k) => !k.startsWith('(idle)'));
print('Inclusive time by function', inclusive, (k) => !k.startsWith('(root)') && !k.startsWith('(idle)'));
