// The policy's read rules inside the sandbox (docs/run-command.md, "Path rules"), through the real HTTP door:
// what a read may not see is not visible to a command either (a directory is an empty tmpfs, a file reads
// empty), the command's answer does not list it, and what the rules allow stays as it was.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';

interface RunData {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  files_changed: { path: string; change: string }[];
}

const SECRET = 'secret-value-0123456789';

describe('run_command under read rules', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('toolgate-exec-paths-');
    const policy = path.join(dir, 'policy.yaml');
    await fs.writeFile(
      policy,
      [
        'rules:',
        '  - name: no-secrets',
        '    risks: [read]',
        "    paths: ['secrets', 'secrets/**', '**/*.key']",
        '    action: deny',
        '  - name: config-stays',
        '    risks: [write, destructive]',
        "    paths: ['config/**']",
        '    action: deny',
        '  - name: commands',
        '    tools: [run_command]',
        '    action: allow',
        '',
      ].join('\n'),
    );
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed', TOOLGATE_POLICY: policy, TOOLGATE_STATE_DIR: path.join(dir, 'state') });
    await fs.mkdir(t.file('secrets/deep'), { recursive: true });
    await fs.writeFile(t.file('secrets/deep/token.txt'), SECRET);
    await fs.mkdir(t.file('src'));
    await fs.writeFile(t.file('src/server.key'), SECRET);
    await fs.writeFile(t.file('src/main.txt'), 'visible\n');
  });
  afterAll(async () => {
    await t?.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const run = async (command: string) => {
    const r = await t.call('run_command', { command });
    expect(r.body.status, JSON.stringify(r.body)).not.toBe('error');
    return r.body.data as RunData;
  };

  it("hides what a read may not see: the denied directory is empty, the denied file reads empty; the rest is there", async () => {
    const d = await run('ls -A secrets; echo ---; cat src/server.key; echo ---; cat src/main.txt; grep -rs secret-value . ; echo end');
    expect(d.stdout).not.toContain(SECRET);
    expect(d.stdout).toBe('---\n---\nvisible\nend\n');
    // Read denied: read_file says so, and the command saw the same.
    const read = await t.call('read_file', { path: 'src/server.key' });
    expect(read.body.error?.code).toBe('ACCESS_DENIED');
  });

  it("a change the policy denies (a write, a removal) lands nothing and names the path", async () => {
    await fs.mkdir(t.file('config'), { recursive: true });
    await fs.writeFile(t.file('config/app.json'), '{}\n');
    for (const command of ['echo x > ok.txt; echo "{1}" > config/app.json', 'echo x > ok.txt; rm config/app.json', 'echo x > ok.txt; echo new > config/new.json']) {
      const r = await t.call('run_command', { command });
      expect(r.body.error?.code, command).toBe('ACCESS_DENIED');
      expect(r.body.error?.message).toMatch(/config\/(app|new)\.json/);
      expect(await fs.stat(t.file('ok.txt')).catch(() => null)).toBeNull();
    }
    expect(await fs.readFile(t.file('config/app.json'), 'utf8')).toBe('{}\n');
    expect(await fs.stat(t.file('config/new.json')).catch(() => null)).toBeNull();
  });

  it('writes into a hidden path do not reach the project, and the answer lists only visible changes', async () => {
    const d = await run('echo x > secrets/planted.txt; echo y > src/server.key; echo z > src/new.txt; echo done');
    expect(d.stdout).toBe('done\n');
    expect(await fs.readFile(t.file('src/server.key'), 'utf8')).toBe(SECRET);
    await expect(fs.stat(t.file('secrets/planted.txt'))).rejects.toThrow();
    expect(d.files_changed.map((c) => c.path)).toEqual(['src/new.txt']);
  });
});
