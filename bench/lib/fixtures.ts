// Generated inputs: a pool of code-like text lines from a fixed seed, the search tree (20,000 files,
// 200 MiB), the 1 GiB text file, and the small per-run files. The tree and the big file are written
// once into the cache directory and reused while their manifest matches.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { progress } from './log.js';
import { KiB, MiB } from './stats.js';

/** mulberry32: small, fast, and the same sequence on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'const let return function async await import export from class extends new this if else for while ' +
  'switch case break continue try catch finally throw typeof instanceof null undefined true false ' +
  'value result buffer config request response handler options state index count length offset ' +
  'items entry record stream reader writer parser token node child parent range start end size limit ' +
  'path file folder workspace project version digest stamp lock timeout signal error message detail ' +
  'map filter reduce push slice splice concat join split trim replace match test search sort keys'
).split(' ');
const PUNCT = ['(', ')', '{', '}', ';', ',', '.', ' = ', ' => ', ' + ', ' && ', ' || ', '[', ']', ': '];

/** A pool of ASCII, code-like lines (none empty, none containing the search needle). */
export function makePool(bytes: number, seed: number): Buffer {
  const rand = prng(seed);
  const out = Buffer.allocUnsafe(bytes + 256);
  let n = 0;
  while (n < bytes) {
    const indent = Math.floor(rand() * 4) * 2;
    let line = ' '.repeat(indent);
    const words = 3 + Math.floor(rand() * 12);
    for (let w = 0; w < words; w++) {
      line += WORDS[Math.floor(rand() * WORDS.length)] as string;
      line += rand() < 0.3 ? (PUNCT[Math.floor(rand() * PUNCT.length)] as string) : ' ';
    }
    line = `${line.trimEnd()}\n`;
    n += out.write(line, n, 'latin1');
  }
  return out.subarray(0, bytes);
}

/** `size` bytes of whole lines from the pool starting near `at` (the last byte is always '\n'). */
export function slicePool(pool: Buffer, at: number, size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let filled = 0;
  let pos = pool.indexOf(10, at % pool.length) + 1;
  while (filled < size) {
    if (pos <= 0 || pos >= pool.length) pos = 0;
    const take = Math.min(size - filled, pool.length - pos);
    pool.copy(out, filled, pos, pos + take);
    filled += take;
    pos += take;
  }
  out[size - 1] = 10;
  return out;
}

export function sha256(buf: Buffer | string): string {
  return createHash('sha256').update(buf).digest('hex');
}

async function readManifest(file: string): Promise<Record<string, unknown> | null> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function sameParams(found: Record<string, unknown> | null, params: Record<string, unknown>): boolean {
  if (!found) return false;
  return Object.entries(params).every(([k, v]) => JSON.stringify(found[k]) === JSON.stringify(v));
}

export const SEARCH_NEEDLE = 'toolgate_bench_needle_q7x';

export interface TreeInfo {
  dir: string;
  files: number;
  bytes: number;
  needleFiles: number;
  needle: string;
}

/** The search tree: `files` text files totalling `bytes`, in 20×20 directories, `needleFiles` of them holding the needle once. */
export async function ensureTree(wsRoot: string, cacheDir: string): Promise<TreeInfo> {
  const params = { kind: 'tree', generator: 1, seed: 20240605, files: 20_000, bytes: 200 * MiB, needleFiles: 40, needle: SEARCH_NEEDLE };
  const dir = path.join(wsRoot, 'tree');
  const manifestFile = path.join(cacheDir, 'tree.manifest.json');
  const info = { dir, files: params.files, bytes: params.bytes, needleFiles: params.needleFiles, needle: params.needle };
  const found = await readManifest(manifestFile);
  if (sameParams(found, params)) {
    // The manifest alone is not proof: the tree may have been removed or cut short since.
    const probe = found?.probe as { path: string; size: number } | undefined;
    const st = probe ? await fs.stat(path.join(dir, probe.path)).catch(() => null) : null;
    if (probe && st?.size === probe.size) return info;
  }
  progress(`generating the search tree (${params.files} files, ${params.bytes / MiB} MiB, seed ${params.seed}) in ${dir} — once, then cached`);
  await fs.rm(manifestFile, { force: true });
  await fs.rm(dir, { recursive: true, force: true });
  const rand = prng(params.seed);
  const pool = makePool(8 * MiB, params.seed + 1);
  const weights = Array.from({ length: params.files }, () => 0.2 + rand() * 1.6);
  const total = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.max(64, Math.floor((params.bytes * w) / total)));
  sizes[sizes.length - 1] = (sizes[sizes.length - 1] as number) + params.bytes - sizes.reduce((a, b) => a + b, 0);
  const needles = new Set<number>();
  while (needles.size < params.needleFiles) needles.add(Math.floor(rand() * params.files));
  const offsets = sizes.map(() => Math.floor(rand() * pool.length));
  const needleAt = sizes.map(() => rand());
  const perDir = params.files / 400;
  for (let d = 0; d < 400; d++) await fs.mkdir(path.join(dir, `d${String(Math.floor(d / 20)).padStart(2, '0')}`, `s${String(d % 20).padStart(2, '0')}`), { recursive: true });
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= params.files) return;
      const d = Math.floor(i / perDir);
      const file = path.join(dir, `d${String(Math.floor(d / 20)).padStart(2, '0')}`, `s${String(d % 20).padStart(2, '0')}`, `f${String(i % perDir).padStart(3, '0')}.ts`);
      const buf = slicePool(pool, offsets[i] as number, sizes[i] as number);
      if (needles.has(i)) {
        // Overwrite the start of a long enough line in the middle third with the needle (size unchanged).
        let at = buf.indexOf(10, Math.floor(buf.length * (0.33 + 0.33 * (needleAt[i] as number)))) + 1;
        while (at > 0 && buf.indexOf(10, at) - at <= SEARCH_NEEDLE.length) at = buf.indexOf(10, at) + 1;
        if (at <= 0) at = 0;
        buf.write(SEARCH_NEEDLE, at, 'latin1');
      }
      await fs.writeFile(file, buf);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  // The last file written by index: its size proves the tree is complete when the manifest is reused.
  const last = params.files - 1;
  const lastDir = Math.floor(last / perDir);
  const probe = { path: path.join(`d${String(Math.floor(lastDir / 20)).padStart(2, '0')}`, `s${String(lastDir % 20).padStart(2, '0')}`, `f${String(last % perDir).padStart(3, '0')}.ts`), size: sizes[last] as number };
  await fs.writeFile(manifestFile, JSON.stringify({ ...params, probe, created: new Date().toISOString() }, null, 2));
  return info;
}

export interface BigFileInfo {
  file: string;
  rel: string;
  bytes: number;
  lines: number;
}

/** A 1 GiB file of real text lines (so "the last 100 lines" means scanning real line breaks). */
export async function ensureBigFile(wsRoot: string, cacheDir: string): Promise<BigFileInfo> {
  const params = { kind: 'big', generator: 1, seed: 777, bytes: 1024 * MiB };
  const rel = 'big/1gib.txt';
  const file = path.join(wsRoot, rel);
  const manifestFile = path.join(cacheDir, 'big.manifest.json');
  const found = await readManifest(manifestFile);
  if (sameParams(found, params) && typeof found?.lines === 'number') {
    const st = await fs.stat(file).catch(() => null);
    if (st?.size === params.bytes) return { file, rel, bytes: params.bytes, lines: found.lines };
  }
  progress(`generating the 1 GiB text file ${file} — once, then cached`);
  await fs.rm(manifestFile, { force: true });
  await fs.mkdir(path.dirname(file), { recursive: true });
  const pool = makePool(16 * MiB, params.seed);
  const rand = prng(params.seed + 1);
  const fh = await fs.open(file, 'w');
  let written = 0;
  let lines = 0;
  try {
    while (written < params.bytes) {
      const size = Math.min(8 * MiB, params.bytes - written);
      const chunk = slicePool(pool, Math.floor(rand() * pool.length), size);
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
      await fh.write(chunk, 0, chunk.length, written);
      written += size;
    }
  } finally {
    await fh.close();
  }
  await fs.writeFile(manifestFile, JSON.stringify({ ...params, lines, created: new Date().toISOString() }, null, 2));
  return { file, rel, bytes: params.bytes, lines };
}

export const EDIT_MARKER = 'export const BENCH_EDIT_TARGET = ';
export const EDIT_STATES = ['"alpha";', '"beta";'] as const;

/** A text file of `size` bytes with one unique line `EDIT_MARKER"alpha";` in its middle. */
export function makeEditFile(pool: Buffer, at: number, size: number): Buffer {
  const line = `${EDIT_MARKER}${EDIT_STATES[0]}\n`;
  const body = slicePool(pool, at, size - line.length);
  const mid = body.indexOf(10, Math.floor(body.length / 2)) + 1;
  return Buffer.concat([body.subarray(0, mid), Buffer.from(line), body.subarray(mid)]);
}

/** Which of the two edit states a file is in now (the bench re-reads it between runs, so a cut-off run cannot desynchronize). */
export async function editStateOf(file: string): Promise<0 | 1> {
  const text = await fs.readFile(file, 'latin1');
  if (text.includes(`${EDIT_MARKER}${EDIT_STATES[0]}`)) return 0;
  if (text.includes(`${EDIT_MARKER}${EDIT_STATES[1]}`)) return 1;
  throw new Error(`${file}: neither edit state found`);
}

/** The edit that moves a file from `state` to the other state. */
export function editFor(state: 0 | 1): { old: string; new: string } {
  return { old: `${EDIT_MARKER}${EDIT_STATES[state]}`, new: `${EDIT_MARKER}${EDIT_STATES[state === 0 ? 1 : 0]}` };
}

export const SMALL = 4 * KiB;
