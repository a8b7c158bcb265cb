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
});
