// What `toolgate serve` tells its operator (issue 23): the policy in force and the console's address in the
// start-up log, a port in use named with the flag that changes it, and a usage error as its message plus one
// line pointing at --help rather than the whole help.
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';
import { cli, run, startServer, type ServerProcess } from './process.js';

const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/policies');
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
});

async function workspace(): Promise<string> {
  const dir = await makeTempDir();
  cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

async function started(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer({ TOOLGATE_AUDIT_STDOUT: 'false', ...env });
  cleanup.push(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });
  return server;
}

describe('start-up log', () => {
  it('names the policy file with its rule count and the console address', async () => {
    const root = await workspace();
    const policy = path.join(EXAMPLES, 'ide.yaml');
    const server = await started({ TOOLGATE_ROOT: root, TOOLGATE_POLICY: policy });
    await server.waitForOutput(/approval console at/);
    const rules = (YAML.parse(await fs.readFile(policy, 'utf8')) as { rules: unknown[] }).rules.length;
    expect(server.output()).toContain(`policy loaded: ${policy} (${rules} rules)`);
    expect(server.output()).toContain(`approval console at http://127.0.0.1:${server.port}/console`);
  });

  it('says when no policy is loaded', async () => {
    const server = await started({ TOOLGATE_ROOT: await workspace() });
    await server.waitForOutput(/approval console at/);
    expect(server.output()).toContain('no policy (TOOLGATE_POLICY unset)');
  });
});

describe('start-up failures', () => {
  it('a port in use names --port and exits 2', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => holder.close(r)));
    const port = (holder.address() as net.AddressInfo).port;
    const r = await run('src/main.ts', ['--root', await workspace()], { TOOLGATE_PORT: String(port), TOOLGATE_AUDIT_STDOUT: 'false' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use (EADDRINUSE)`);
    expect(r.stderr).toContain('--port N');
  });

  it('a CLI usage error prints the message and one line pointing at --help', async () => {
    const r = await cli(['call']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("toolgate: name the tool: toolgate call <tool> key=value …\nRun 'toolgate --help' for the commands and their options.\n");
    const unknown = await cli(['tools', '--frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).not.toContain('Usage:');
    expect(unknown.stderr.trim().split('\n')).toHaveLength(2);
  });
});
