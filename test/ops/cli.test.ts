// The `toolgate` command against a real server process: tools, call (readable envelope, exit codes),
// hash-token, audit verify, openapi, serve --help.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatEnvelope, parseCallArgs } from '../../src/cli-client.js';
import { hashToken } from '../../src/ops/auth.js';
import { compiled, REPO } from '../compiled.js';
import { makeTempDir } from '../helpers.js';
import { cli, startServer, type ServerProcess } from './process.js';

let server: ServerProcess;
let dir: string;
let root: string;
const TOKEN = 'tg_cli_test_token_5d1c0e';

beforeAll(async () => {
  dir = await makeTempDir();
  root = path.join(dir, 'ws');
  const tokens = path.join(dir, 'tokens.yaml');
  await fs.writeFile(tokens, `- id: cli\n  sha256: ${hashToken(TOKEN)}\n`);
  server = await startServer({ TOOLGATE_ROOT: root, TOOLGATE_TOKENS_FILE: tokens, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_INSTANCE_ID: 'cli' });
});
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  await fs.rm(dir, { recursive: true, force: true });
});

describe.concurrent('toolgate call', () => {
  it('key=value arguments, readable output, exit 0; the token from TOOLGATE_TOKEN', async () => {
    const w = await cli(['call', 'write_file', 'path=notes/a.txt', 'content=line one\nline two\n', '--url', server.url], { TOOLGATE_TOKEN: TOKEN });
    expect(w.stderr).toBe('');
    expect(w.code).toBe(0);
    expect(w.stdout).toMatch(/^success: Created 'notes\/a\.txt'/);
    const r = await cli(['call', 'read_file', '--json', '{"path":"notes/a.txt","start_line":2}', '--url', server.url, '--token', TOKEN]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^success: /);
    expect(r.stdout).toMatch(/---\nline two$/m);
  });

  it('an error envelope prints the code and message and exits 1', async () => {
    const r = await cli(['call', 'read_file', 'path=missing.txt', '--url', server.url, '--token', TOKEN]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^error NOT_FOUND \(HTTP 404\): File not found: missing\.txt/);
  });

  it('without the token: UNAUTHORIZED, exit 1', async () => {
    const r = await cli(['call', 'read_file', 'path=a.txt', '--url', server.url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/error UNAUTHORIZED \(HTTP 401\)/);
  });

  it('--raw prints the envelope JSON', async () => {
    await fs.writeFile(path.join(root, 'raw.txt'), 'raw content\n');
    const r = await cli(['call', 'read_file', 'path=raw.txt', '--raw', '--url', server.url, '--token', TOKEN]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'success', data: { content: 'raw content\n' } });
  });

  it('an unreachable server exits 3; bad arguments exit 2', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as net.AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    const down = await cli(['call', 'read_file', 'path=a.txt', '--url', `http://127.0.0.1:${closedPort}`]);
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
    const bad = await cli(['call', 'read_file', 'no-equals-sign', '--url', server.url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected key=value/);
  });

  it('argument parsing: strings, numbers, booleans, JSON with :=', () => {
    expect(parseCallArgs(['path=a.txt', 'start_line=3', 'line_numbers=true', 'content=hello world', 'edits:=[{"old_text":"a","new_text":"b"}]', 'n:="7"'])).toEqual({
      path: 'a.txt',
      start_line: 3,
      line_numbers: true,
      content: 'hello world',
      edits: [{ old_text: 'a', new_text: 'b' }],
      n: '7',
    });
  });

  it('formatEnvelope shows status, text, data and the content last', () => {
    const out = formatEnvelope({ status: 'success', text: "Read 'a' (1 lines).", data: { content: 'hi\n', total_lines: 1 }, stats: { time_ms: 1 } }, 200);
    expect(out).toBe("success: Read 'a' (1 lines).\ntotal_lines: 1\nstats: time_ms=1\n---\nhi\n");
  });
});

describe.concurrent('toolgate call: values from files and standard input', () => {
  const call = (args: string[], stdin?: string) => cli(['call', ...args, '--url', server.url, '--token', TOKEN], {}, stdin);

  it('content=@file writes the file byte for byte (BOM, CRLF and last newline kept)', async () => {
    const src = path.join(dir, 'src-a.txt');
    const bytes = '\uFEFFfirst\r\nsecond = "@x" $HOME\r\n';
    await fs.writeFile(src, bytes);
    const r = await call(['write_file', 'path=from-file/a.txt', `content=@${src}`]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await fs.readFile(path.join(root, 'from-file/a.txt'), 'utf8')).toBe(bytes);
  });

  it('content=@- reads standard input; new_text=@- works for edit_file too', async () => {
    const w = await call(['write_file', 'path=stdin/a.txt', 'content=@-'], 'from stdin\nline 2\n');
    expect(w.code).toBe(0);
    expect(await fs.readFile(path.join(root, 'stdin/a.txt'), 'utf8')).toBe('from stdin\nline 2\n');
    const e = await call(['edit_file', 'path=stdin/a.txt', 'old_text=line 2', 'new_text=@-'], 'line two');
    expect(e.code).toBe(0);
    expect(await fs.readFile(path.join(root, 'stdin/a.txt'), 'utf8')).toBe('from stdin\nline two\n');
  });

  it('key:=@file reads JSON, --json @- the whole argument object, key=@@text is the literal @text', async () => {
    await fs.writeFile(path.join(root, 'json.txt'), 'a b c\n');
    const edits = path.join(dir, 'edits.json');
    await fs.writeFile(edits, JSON.stringify([{ old_text: 'a', new_text: 'A' }, { old_text: 'c', new_text: 'C' }]));
    const e = await call(['edit_file', 'path=json.txt', `edits:=@${edits}`]);
    expect(e.code).toBe(0);
    expect(await fs.readFile(path.join(root, 'json.txt'), 'utf8')).toBe('A b C\n');
    const j = await call(['write_file', '--json', '@-'], JSON.stringify({ path: 'json-stdin.txt', content: 'x\n' }));
    expect(j.code).toBe(0);
    expect(await fs.readFile(path.join(root, 'json-stdin.txt'), 'utf8')).toBe('x\n');
    const at = await call(['write_file', 'path=at.txt', 'content=@@handle and @-']);
    expect(at.code).toBe(0);
    expect(await fs.readFile(path.join(root, 'at.txt'), 'utf8')).toBe('@handle and @-');
  });

  it('a missing file, a binary file, @- twice and bad JSON are usage errors (exit 2) that send nothing', async () => {
    const missing = await call(['write_file', 'path=never.txt', `content=@${path.join(dir, 'nope.txt')}`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^toolgate: content=@.*nope\.txt: cannot read '.*nope\.txt': no such file/);
    const bin = path.join(dir, 'image.bin');
    await fs.writeFile(bin, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]));
    const binary = await call(['write_file', 'path=never.txt', `content=@${bin}`]);
    expect(binary.code).toBe(2);
    expect(binary.stderr).toMatch(/is not UTF-8 text; send binary content as base64: encoding=base64/);
    const twice = await call(['edit_file', 'path=never.txt', 'old_text=@-', 'new_text=@-'], 'x');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/new_text=@-: standard input is already the value of old_text=@-/);
    const dirValue = await call(['write_file', 'path=never.txt', `content=@${dir}`]);
    expect(dirValue.code).toBe(2);
    expect(dirValue.stderr).toMatch(/it is a directory/);
    const badJson = await call(['write_file', '--json', '@-'], '[1,2]');
    expect(badJson.code).toBe(2);
    await expect(fs.stat(path.join(root, 'never.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('parseCallArgs reads @ values through the given sources, as strings (never numbers)', () => {
    const sources = { readFile: (p: string) => Buffer.from(`file ${p}`), readStdin: () => Buffer.from('42') };
    expect(parseCallArgs(['a=@x.txt', 'b=@-', 'c=@@1', 'n:=@n.json'], { ...sources, readFile: (p) => Buffer.from(p === 'n.json' ? '7' : `file ${p}`) })).toEqual({ a: 'file x.txt', b: '42', c: '@1', n: 7 });
    expect(() => parseCallArgs(['a=@'], sources)).toThrow(/name a file after @/);
  });
});

describe.concurrent('other commands', () => {
  it('tools lists the registry', async () => {
    const r = await cli(['tools']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^read_file\s+read\s+/m);
    expect(r.stdout).toMatch(/^write_file\s+write\s+/m);
    const openai = await cli(['tools', '--format', 'openai']);
    expect(JSON.parse(openai.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'function' })]));
  });

  it('tools piped into a reader that stops early (| head) exits quietly, no EPIPE crash', async () => {
    const child = spawn(process.execPath, [compiled('src/cli.ts'), 'tools'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('hash-token prints the sha256 (argument or stdin)', async () => {
    expect((await cli(['hash-token', 'test'])).stdout).toBe('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n');
    expect((await cli(['hash-token', '-'], {}, 'test\n')).stdout).toBe('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n');
  });

  it('audit verify: intact exits 0; an edited line exits 1 with its number', async () => {
    const auditDir = path.join(root, '.toolgate', 'audit');
    // the other tests' calls are audited by the server (which appends each line right after the call)
    let file = '';
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      const files = await fs.readdir(auditDir).catch(() => []);
      if (files[0]) {
        file = path.join(auditDir, files[0]);
        if ((await fs.readFile(file, 'utf8')).trim().split('\n').length >= 3) break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const ok = await cli(['audit', 'verify', file]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^OK: .* line\(s\), hash chain intact\./);
    const lines = (await fs.readFile(file, 'utf8')).trim().split('\n');
    lines[1] = (lines[1] as string).replace('"outcome":"', '"outcome":"x');
    const edited = path.join(dir, 'edited.jsonl');
    await fs.writeFile(edited, `${lines.join('\n')}\n`);
    const bad = await cli(['audit', 'verify', edited]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^FAILED: .*: line 2: the line was edited/);
    const missing = await cli(['audit', 'verify', path.join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
  });

  it('openapi prints the OpenAPI YAML', async () => {
    const r = await cli(['openapi']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^openapi: 3\.1\.0/);
    expect(r.stdout).toContain('/v1/tools/read_file:');
  });

  it('serve --help lists every setting; --version; unknown commands exit 2', async () => {
    const help = await cli(['serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--root VALUE');
    expect(help.stdout).toContain('TOOLGATE_RATE_LIMIT');
    expect((await cli(['--version'])).stdout).toBe('0.1.0\n');
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'frobnicate'/);
  });
});
