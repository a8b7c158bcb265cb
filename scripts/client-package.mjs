// Builds the typed client as a package of its own, `toolgate-client`, depending only on openapi-fetch: a
// project that calls toolgate installs it without the server's dependencies. `npm run client:pack [DIR]`
// writes the package to DIR (default dist/client-package) and its tarball beside it; `npm publish` the tarball.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(process.argv[2] ?? path.join(REPO, 'dist', 'client-package'));
const root = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
execFileSync(process.execPath, [path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(REPO, 'tsconfig.client.json'), '--outDir', path.join(out, 'dist')], { stdio: 'inherit' });

const pkg = {
  name: 'toolgate-client',
  version: root.version,
  description: "Typed client for toolgate's HTTP API: openapi-fetch over the types of its OpenAPI document.",
  type: 'module',
  license: root.license,
  engines: root.engines,
  exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' }, './package.json': './package.json' },
  files: ['dist'],
  dependencies: { 'openapi-fetch': root.dependencies['openapi-fetch'] },
};
fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
// The README's section on the client is the package's README.
const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
const section = /### TypeScript client\n[\s\S]*?(?=\n### )/.exec(readme)?.[0] ?? '';
fs.writeFileSync(path.join(out, 'README.md'), `# toolgate-client\n${section.replace(/^### TypeScript client\n/, '')}`);
const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', path.dirname(out)], { cwd: out, encoding: 'utf8' }).trim().split('\n').pop();
console.log(path.join(path.dirname(out), tarball));
