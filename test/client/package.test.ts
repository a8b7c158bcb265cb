// The client as a consumer gets it: `toolgate/client` resolved through package.json "exports" to what
// tsc emits (tsconfig.client.json, part of `npm run build`), and its types in step with openapi.yaml.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';

const run = promisify(execFile);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = (name: string) => path.join(REPO, 'node_modules', '.bin', name);

describe('toolgate/client as a package', () => {
  it('src/client/schema.ts matches openapi.yaml (run `npm run client` when this fails)', async () => {
    const { stdout } = await run(bin('tsx'), ['scripts/client.ts', '--check'], { cwd: REPO });
    expect(stdout).toContain('up to date');
  });

  it('resolves toolgate/client to the built files, JavaScript and declarations', async () => {
    // A copy of the package with only the client's build (tsc -p tsconfig.client.json, part of the build
    // vitest's global set-up makes): self-reference resolves "exports" as a consumer would.
    const pkg = await makeTempDir('toolgate-client-pkg-');
    try {
      await fs.copyFile(path.join(REPO, 'package.json'), path.join(pkg, 'package.json'));
      await fs.symlink(path.join(REPO, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
      await fs.cp(path.join(REPO, 'dist', 'client'), path.join(pkg, 'dist', 'client'), { recursive: true });
      const exported = JSON.parse(await fs.readFile(path.join(pkg, 'package.json'), 'utf8')).exports['./client'] as { types: string; import: string };
      await fs.access(path.join(pkg, exported.types));

      const probe = "const m = await import('toolgate/client'); const c = m.createToolgateClient({ baseUrl: 'http://127.0.0.1:9' }); console.log(typeof c.callTool, typeof c.GET);";
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], { cwd: pkg });
      expect(stdout.trim()).toBe('function function');
    } finally {
      await fs.rm(pkg, { recursive: true, force: true });
    }
  });

  it('builds as toolgate-client, installs into another project with openapi-fetch alone, and the README snippet type-checks under --strict', async () => {
    const work = await makeTempDir('toolgate-client-consumer-');
    try {
      const { stdout } = await run(process.execPath, [path.join(REPO, 'scripts', 'client-package.mjs'), path.join(work, 'pkg')], { cwd: REPO });
      const tarball = stdout.trim().split('\n').pop() as string;
      const app = path.join(work, 'app');
      await fs.mkdir(app);
      await fs.writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
      // From npm's cache where it can: the only registry package is openapi-fetch (and its helper types).
      await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: app });
      const installed = (await fs.readdir(path.join(app, 'node_modules'))).filter((n) => !n.startsWith('.')).sort();
      expect(installed).toEqual(['openapi-fetch', 'openapi-typescript-helpers', 'toolgate-client']);

      const readme = await fs.readFile(path.join(REPO, 'README.md'), 'utf8');
      const snippet = /### TypeScript client[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
      expect(snippet).toContain("from 'toolgate-client'");
      await fs.writeFile(path.join(app, 'snippet.ts'), snippet as string);
      const tsc = [bin('tsc'), '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
      const types = ['--typeRoots', path.join(REPO, 'node_modules', '@types'), '--types', 'node'];
      await run(tsc[0] as string, [...tsc.slice(1), ...types, 'snippet.ts'], { cwd: app });
      // The same snippet reading data without narrowing to success is a type error: the check can fail.
      await fs.writeFile(path.join(app, 'unnarrowed.ts'), `${snippet}\nconsole.log(read.envelope.data.content);\n`);
      await expect(run(tsc[0] as string, [...tsc.slice(1), ...types, 'unnarrowed.ts'], { cwd: app })).rejects.toMatchObject({ stdout: expect.stringContaining('error TS') });

      const { stdout: loaded } = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('toolgate-client'); console.log(typeof m.createToolgateClient);"], { cwd: app });
      expect(loaded.trim()).toBe('function');
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
    // npm install and two tsc runs: minutes on a busy machine, and no assertion is about time.
  }, 300_000);
});
