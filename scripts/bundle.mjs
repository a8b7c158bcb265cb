// Production build, second step (`npm run build` runs it after tsc): replaces tsc's dist/serve.js with
// one esbuild bundle of src/serve.ts and everything it imports, packages included. Cold start is mostly
// Node's module loader (resolving, stat-ing and compiling some 650 files); one file takes most of that
// away. dist/main.js stays as tsc emits it, so it still enables the compile cache before importing
// ./serve.js, and the cache then holds the bundle. `toolgate serve` (dist/cli.js) imports the same file;
// the CLI's other commands keep using tsc's per-module files, and no process loads both for the app.
//
// Plain JavaScript so that it runs with no loader: node scripts/bundle.mjs [--outdir DIR] (default dist).
import { build } from 'esbuild';
import { cp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const REPO = path.resolve(import.meta.dirname, '..');

// Loaded from node_modules at run time, so they stay production dependencies (see the Dockerfile):
// - @fastify/swagger-ui finds its static files (/docs) through __dirname;
// - thread-stream starts its worker from a file next to it (pino's transports: pino-pretty on a TTY),
//   and pino-pretty runs in that worker;
// - ioredis is imported only with TOOLGATE_REDIS_URL: left outside, other starts do not even parse it;
// - yaml: @fastify/swagger-ui (outside) loads it from node_modules anyway, so one copy, not two.
// - @fastify/ajv-compiler and @fastify/fast-json-stringify-compiler (ajv, fast-json-stringify): Fastify
//   requires them only for an instance without its own compilersFactory, and both of ours have one
//   (app.ts, transports/docs.ts); bundled, a start still parsed their 600 KiB (start 4-5% faster without).
// (iconv-lite is not bundled either: src/workspace/encoding.ts requires it from node_modules at the first
// encoding other than utf-8, through createRequire, which esbuild leaves alone.)
const EXTERNAL = ['@fastify/swagger-ui', 'thread-stream', 'pino-pretty', 'ioredis', 'yaml', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'];

// Bundled CommonJS packages call require() (for Node's built-ins and the externals above); an ES module
// has none, so the bundle gets one. esbuild's require shim refers to this free `require`, so esbuild
// renames any bundled module's own top-level `require` (require2) rather than clash with it.
const BANNER = "import { createRequire as __toolgateCreateRequire } from 'node:module';\nconst require = __toolgateCreateRequire(import.meta.url);";

// `import { z } from 'zod'` is zod's namespace object, which re-exports every locale: 366 KiB of the start's
// bundle for messages in 40-odd languages. The service answers in English, the locale zod sets itself
// (config(en()) in zod/v4/classic), and nothing reads z.locales: the bundle keeps en alone.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' } }, strict: true });
const outdir = path.resolve(REPO, values.outdir);
const outfile = path.join(outdir, 'serve.js');

// Code a start does not run (a dynamic import(): the web engines, the office readers, the policy machinery,
// Swagger UI...) goes to chunks of its own, read only when first imported; what both sides need goes to shared
// chunks. The chunks sit beside serve.js, so import.meta.url (the console's files, the edit worker,
// createRequire) names the same directory from any of them. The previous build's chunks are removed first.
const CHUNK_PREFIX = 'serve.';
for (const name of await readdir(outdir).catch(() => [])) {
  if (name.startsWith(CHUNK_PREFIX) && name.endsWith('.js')) await rm(path.join(outdir, name));
}

const started = performance.now();
const result = await build({
  absWorkingDir: REPO,
  entryPoints: { serve: 'src/serve.ts' },
  outdir,
  splitting: true,
  chunkNames: `${CHUNK_PREFIX}[name]-[hash]`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  external: EXTERNAL,
  plugins: [zodEnglishOnly],
  banner: { js: BANNER },
  // Not minified: stack traces and logs keep their names, and the search worker's source, taken from
  // Function#toString (src/search/pool.ts), stays as written. No keepNames either: it would wrap functions
  // in __name() calls for little use.
  minify: false,
  metafile: true,
  logLevel: 'warning',
});

// The edit engine's worker (src/edit/off-thread.ts) imports dist/edit-worker.js, beside the bundle: a
// worker cannot share the bundle's module instances, and loading all of dist/serve.js per large edit would
// start the whole server's code for a few functions. A fresh worker loads it for each large edit, so the
// engine imports ToolError from src/errors.ts, which has no zod (0.8 MB less); the check below keeps it so.
const worker = await build({
  absWorkingDir: REPO,
  entryPoints: ['src/edit/edit-worker.ts'],
  outfile: path.resolve(REPO, values.outdir, 'edit-worker.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  banner: { js: BANNER },
  minify: false,
  metafile: true,
  logLevel: 'warning',
});

const zodInWorker = Object.keys(worker.metafile.inputs).filter((input) => input.includes('node_modules/zod/') || input === 'src/envelope.ts');
if (zodInWorker.length > 0) throw new Error(`dist/edit-worker.js includes ${zodInWorker[0]}: import only what the engine needs in src/edit/`);

// A module that finds files through __dirname/__filename breaks once moved into the bundle (an ES
// module has neither: a ReferenceError when reached). Every bundled file that names them must be known
// harmless here, so that a dependency update that adds one fails the build rather than production.
const DIRNAME_HARMLESS = {
  // readPackageJson(): try/catch, falls back to {}; only fills openapi.info, which app.ts sets itself.
  'node_modules/@fastify/swagger/lib/util/read-package-json.js': true,
  // Only for the `targets`/`pipeline` options and the 'pino/file' target; serve.ts uses one target,
  // pino-pretty, which is resolved from the caller (this bundle) and run by the external thread-stream.
  'node_modules/pino/lib/transport.js': true,
  // `typeof __filename !== 'undefined' ? __filename : undefined`: only for stack-trace augmentation.
  'node_modules/undici/index.js': true,
};
const unknown = [];
for (const input of new Set([...Object.keys(result.metafile.inputs), ...Object.keys(worker.metafile.inputs)])) {
  // Inputs are relative to the repository, and a symlinked node_modules is followed: name them from node_modules/.
  const name = input.includes('node_modules/') ? input.slice(input.lastIndexOf('node_modules/')) : input;
  if (DIRNAME_HARMLESS[name] || !/\.[cm]?js$/.test(name)) continue;
  if (/\b__(dirname|filename)\b/.test(await readFile(path.resolve(REPO, input), 'utf8'))) unknown.push(name);
}
if (unknown.length > 0) {
  throw new Error(`bundled modules use __dirname/__filename: ${unknown.join(', ')}\n(make their package external in scripts/bundle.mjs, or list them as harmless)`);
}

// The approval console's static files (src/transports/console.ts finds them next to the bundle).
await cp(path.resolve(REPO, 'src/console'), path.resolve(REPO, values.outdir, 'console'), { recursive: true });

// The build's last step marks it done: `npm start` (scripts/build-if-stale.mjs) rebuilds only when a
// source is newer than this file.
await writeFile(path.resolve(REPO, values.outdir, '.build-stamp'), '');

const inputs = Object.keys(result.metafile.inputs).length;
const size = (await stat(outfile)).size;
const chunks = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js') && path.basename(f) !== 'serve.js');
const atStart = startChunks(result.metafile, path.relative(REPO, outfile));
const startSize = (await Promise.all(atStart.map((f) => stat(path.resolve(REPO, f))))).reduce((n, st) => n + st.size, 0);
console.log(
  `bundle: ${path.relative(REPO, outfile)} (${inputs} modules, ${(size / 1024).toFixed(0)} KiB; ${chunks.length} chunks; read at start ${atStart.length} files, ${(startSize / 1024).toFixed(0)} KiB) in ${(performance.now() - started).toFixed(0)} ms`,
);

/** The files a start reads: serve.js and the chunks it imports statically, transitively. */
function startChunks(metafile, entry) {
  const seen = new Set([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    for (const imp of metafile.outputs[queue.pop()]?.imports ?? []) {
      if (imp.kind === 'import-statement' && !imp.external && !seen.has(imp.path)) {
        seen.add(imp.path);
        queue.push(imp.path);
      }
    }
  }
  return [...seen];
}
