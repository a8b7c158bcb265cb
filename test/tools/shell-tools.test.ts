// shell_readonly / shell_write / shell_destructive over the real app: the strict tokenizer refuses every
// class of shell syntax, each command answers like its namesake, paths stay inside the workspace, and rm
// is backed up and undone with restore_backup.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenize } from '../../src/tools/shell/tokenize.js';
import { runDate } from '../../src/tools/shell/commands.js';
import { ToolError } from '../../src/envelope.js';
import { makeApp, type TestApp } from '../helpers.js';

interface ShellData {
  program: string;
  argv: string[];
  output: string;
  truncated: boolean;
  backup_id?: string | null;
  created?: boolean;
}

let t: TestApp;
const out = async (command: string, args?: string[], tool = 'shell_readonly') => {
  const res = await t.call(tool, args ? { command, args } : { command });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as ShellData).output;
};

beforeAll(async () => {
  t = await makeApp();
  await fs.mkdir(t.file('src/lib'), { recursive: true });
  await fs.writeFile(t.file('src/main.ts'), 'x'.repeat(2000));
  await fs.writeFile(t.file('src/lib/util.ts'), 'y');
  await fs.writeFile(t.file('README.md'), 'hello\n');
  await fs.writeFile(t.file('.env'), 'SECRET=1\n');
  await fs.writeFile(t.file('my file.txt'), 'spaced\n');
  await fs.utimes(t.file('README.md'), new Date('2024-01-01T00:00:00Z'), new Date('2024-01-01T00:00:00Z'));
});
afterAll(() => t.close());

describe('the tokenizer', () => {
  it('splits words and handles quotes as sh does', () => {
    expect(tokenize('ls  -la\tsrc')).toEqual(['ls', '-la', 'src']);
    expect(tokenize(`ls 'my file.txt' "a;b" x'y z'w`)).toEqual(['ls', 'my file.txt', 'a;b', 'xy zw']);
    expect(tokenize("rm ''")).toEqual(['rm', '']);
    expect(tokenize('ls Überblick/日本語.docx a=b,c:d@e%f+g')).toEqual(['ls', 'Überblick/日本語.docx', 'a=b,c:d@e%f+g']);
  });

  const refused: Array<[string, string, string]> = [
    ['separator', 'ls; rm x', ';'],
    ['and', 'ls && rm x', '&'],
    ['background', 'ls &', '&'],
    ['pipe', 'ls | cat', '|'],
    ['or', 'ls || rm x', '|'],
    ['redirect out', 'ls > out', '>'],
    ['redirect in', 'ls < in', '<'],
    ['backtick', 'ls `id`', '`'],
    ['variable', 'ls $HOME', '$'],
    ['substitution', 'ls $(id)', '$'],
    ['subshell', '(ls)', '('],
    ['glob star', 'ls *.ts', '*'],
    ['glob question', 'ls ?.ts', '?'],
    ['glob class', 'ls [ab].ts', '['],
    ['brace', 'ls {a,b}', '{'],
    ['tilde', 'ls ~', '~'],
    ['backslash', 'ls a\\ b', '\\'],
    ['comment', 'ls #x', '#'],
    ['history', 'ls !1', '!'],
    ['newline', 'ls\nrm x', '\\n'],
    ['carriage return', 'ls\rx', 'U+000D'],
    ['no-break space', 'ls\u00a0x', 'U+00A0'],
    ['$ in double quotes', 'ls "$HOME"', '$'],
    ['backtick in double quotes', 'ls "`id`"', '`'],
  ];
  it.each(refused)('refuses %s, naming the character', async (_label, command, shown) => {
    expect(() => tokenize(command)).toThrow(ToolError);
    const res = await t.call('shell_readonly', { command });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_PARAM');
    expect(res.body.error?.details).toMatchObject({ character: shown });
    expect(res.body.error?.message).toContain(`'${shown}'`);
  });

  it('refuses unterminated quotes', async () => {
    const res = await t.call('shell_readonly', { command: "ls 'src" });
    expect(res.body.error?.code).toBe('INVALID_PARAM');
    expect(res.body.error?.message).toContain('Unterminated single quote');
  });

  it('takes args literally (no tokenizing) with command as the program name only', async () => {
    expect(await out('ls', ['my file.txt'])).toBe('my file.txt\n');
    const both = await t.call('shell_readonly', { command: 'ls -l', args: ['src'] });
    expect(both.body.error?.code).toBe('INVALID_PARAM');
    const glob = await t.call('shell_readonly', { command: 'ls', args: ['*.md'] });
    expect(glob.body.error?.code).toBe('NOT_FOUND'); // a literal name, never expanded
  });
});

describe('shell_readonly', () => {
  it('refuses programs outside its whitelist, and names the tool for mkdir/rm', async () => {
    for (const [command, hint] of [['cat README.md', ''], ['sh -c ls', ''], ['rm README.md', 'shell_destructive'], ['mkdir x', 'shell_write']] as const) {
      const res = await t.call('shell_readonly', { command });
      expect(res.body.error?.code, command).toBe('INVALID_PARAM');
      expect(res.body.error?.message).toContain(hint);
    }
    expect(await fs.readFile(t.file('README.md'), 'utf8')).toBe('hello\n');
  });

  it('pwd shows the project root, never a host path', async () => {
    const res = await t.call('shell_readonly', { command: 'pwd' });
    expect((res.body.data as ShellData).output).toBe('/\n');
    expect(JSON.stringify(res.body)).not.toContain(t.root);
  });

  it('date prints the server time in the default, ISO and RFC formats', async () => {
    const now = new Date(Date.UTC(2024, 2, 5, 14, 3, 7));
    expect(runDate(['-u'], now).output).toBe('Tue Mar  5 14:03:07 UTC 2024\n');
    expect(runDate(['-u', '-I'], now).output).toBe('2024-03-05\n');
    expect(runDate(['-u', '-Iseconds'], now).output).toBe('2024-03-05T14:03:07+00:00\n');
    expect(runDate(['--utc', '-R'], now).output).toBe('Tue, 05 Mar 2024 14:03:07 +0000\n');
    expect(await out('date -u -Iseconds')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00\n$/);
    expect((await t.call('shell_readonly', { command: 'date +%s' })).body.error?.message).toContain('+FORMAT');
    expect((await t.call('shell_readonly', { command: 'date -s 2020-01-01' })).body.error?.code).toBe('INVALID_PARAM');
  });

  it('ls lists names, hidden ones with -a/-A, and refuses other flags', async () => {
    expect(await out('ls')).toBe('README.md\nmy file.txt\nsrc\n');
    expect(await out('ls -A')).toBe('.env\nREADME.md\nmy file.txt\nsrc\n');
    expect(await out('ls -a1')).toBe('.env\nREADME.md\nmy file.txt\nsrc\n');
    expect(await out('ls -r')).toBe('src\nmy file.txt\nREADME.md\n');
    expect(await out('ls -S README.md src/lib/util.ts src/main.ts')).toBe('src/main.ts\nREADME.md\nsrc/lib/util.ts\n');
    expect(await out('ls README.md src/main.ts')).toBe('README.md\nsrc/main.ts\n');
    const bad = await t.call('shell_readonly', { command: 'ls -d' });
    expect(bad.body.error?.message).toContain('flag -d is not allowed');
    expect((await t.call('shell_readonly', { command: 'ls --color' })).body.error?.code).toBe('INVALID_PARAM');
  });

  it('ls -t sorts newest first; -l shows the long format without link targets', async () => {
    expect((await out('ls -t')).split('\n').at(-2)).toBe('README.md');
    const long = await out('ls -l');
    expect(long).toMatch(/^total \d+\n/);
    expect(long).toMatch(/^-rw.* 6 Jan {2}1 {2}2024 README\.md$/m);
    expect(long).toMatch(/^d[rwx-]{9} .* src$/m);
    expect(await out('ls -lh src')).toMatch(/ 2\.0K .* main\.ts$/m);
    await fs.symlink('/etc/passwd', t.file('src/link'));
    try {
      const withLink = await out('ls -l src');
      expect(withLink).toMatch(/^l.* link$/m);
      expect(withLink).not.toContain('/etc');
    } finally {
      await fs.rm(t.file('src/link'));
    }
  });

  it('ls -R lists every directory in sections', async () => {
    expect(await out('ls -R src')).toBe('src:\nlib\nmain.ts\n\nsrc/lib:\nutil.ts\n');
  });

  it('refuses paths outside the workspace and the state directory', async () => {
    for (const [p, code] of [['..', 'ACCESS_DENIED'], ['../../etc', 'ACCESS_DENIED'], ['/etc', 'INVALID_PARAM'], ['.toolgate', 'ACCESS_DENIED']] as const) {
      const res = await t.call('shell_readonly', { command: `ls ${p}` });
      expect(res.body.error?.code, p).toBe(code);
      expect(JSON.stringify(res.body)).not.toContain(t.root);
    }
    expect(await out('ls -A')).not.toContain('.toolgate');
  });

  it('caps the output like read_file', async () => {
    const small = await makeApp({ TOOLGATE_MAX_OUTPUT_BYTES: '25' });
    try {
      for (let i = 0; i < 10; i++) await fs.writeFile(small.file(`file-${i}.txt`), '');
      const res = await small.call('shell_readonly', { command: 'ls' });
      expect(res.body.status).toBe('partial');
      expect(res.body.data).toMatchObject({ truncated: true, output: 'file-0.txt\nfile-1.txt\n' });
    } finally {
      await small.close();
    }
  });
});

describe('shell_write and shell_destructive', () => {
  it('mkdir creates through create_directory; -p for parents and existing ones', async () => {
    const res = await t.call('shell_write', { command: 'mkdir build' });
    expect(res.body.status).toBe('success');
    expect(res.body.context).toMatchObject({ risk: 'write', risk_level: 'medium', path_resolved: 'build' });
    expect((await fs.stat(t.file('build'))).isDirectory()).toBe(true);
    expect((await t.call('shell_write', { command: 'mkdir build' })).body.error?.code).toBe('ALREADY_EXISTS');
    expect((await t.call('shell_write', { command: 'mkdir -p build' })).body.data).toMatchObject({ created: false });
    expect((await t.call('shell_write', { command: 'mkdir a/b/c' })).body.error?.code).toBe('PARENT_NOT_FOUND');
    expect((await t.call('shell_write', { command: 'mkdir', args: ['-p', 'a/b c'] })).body.data).toMatchObject({ created: true, created_path: 'a' });
    expect((await fs.stat(t.file('a/b c'))).isDirectory()).toBe(true);
    for (const command of ['mkdir ../escape', 'mkdir /tmp/escape', 'mkdir -m 777 x', 'ls', 'mkdir a b']) {
      expect((await t.call('shell_write', { command })).body.status, command).toBe('error');
    }
    await expect(fs.access(path.join(path.dirname(t.root), 'escape'))).rejects.toThrow();
  });

  it('rm deletes one file through delete_file, backed up and restorable', async () => {
    await fs.writeFile(t.file('doomed.txt'), 'precious\n');
    const res = await t.call('shell_destructive', { command: 'rm doomed.txt' });
    expect(res.body.status).toBe('success');
    expect(res.body.context).toMatchObject({ risk: 'destructive', risk_level: 'high', path_resolved: 'doomed.txt' });
    const backupId = (res.body.data as ShellData).backup_id as string;
    expect(backupId).toBeTruthy();
    await expect(fs.access(t.file('doomed.txt'))).rejects.toThrow();
    const restored = await t.call('restore_backup', { backup_id: backupId });
    expect(restored.body.status, JSON.stringify(restored.body)).toBe('success');
    expect(await fs.readFile(t.file('doomed.txt'), 'utf8')).toBe('precious\n');
  });

  it('rm refuses directories, -r, outside paths; -f accepts a missing file', async () => {
    expect((await t.call('shell_destructive', { command: 'rm src' })).body.error?.code).toBe('IS_DIRECTORY');
    for (const command of ['rm -r src', 'rm -rf src', 'rm --recursive src', 'rm -d src']) {
      const res = await t.call('shell_destructive', { command });
      expect(res.body.error?.code, command).toBe('INVALID_PARAM');
      expect(res.body.error?.message).toContain('directories are refused');
    }
    expect((await fs.stat(t.file('src/main.ts'))).isFile()).toBe(true);
    expect((await t.call('shell_destructive', { command: 'rm ../outside.txt' })).body.error?.code).toBe('ACCESS_DENIED');
    expect((await t.call('shell_destructive', { command: 'rm missing.txt' })).body.error?.code).toBe('NOT_FOUND');
    const forced = await t.call('shell_destructive', { command: 'rm -f missing.txt' });
    expect(forced.body.status).toBe('success');
    expect(forced.body.data).toMatchObject({ deleted: false, backup_id: null });
    expect((await t.call('shell_destructive', { command: 'ls' })).body.error?.code).toBe('INVALID_PARAM');
  });
});

describe('the dashed tool ids', () => {
  it('shell-readonly, shell-write and shell-destructive answer as their tools, as the other dashed ids do', async () => {
    expect(await out('ls', ['README.md'], 'shell-readonly')).toContain('README.md');
    const made = await t.call('shell-write', { command: 'mkdir dashed-dir' });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect((await fs.stat(t.file('dashed-dir'))).isDirectory()).toBe(true);
    await fs.writeFile(t.file('dashed.txt'), 'bye\n');
    const removed = await t.call('shell-destructive', { command: 'rm dashed.txt' });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(await fs.stat(t.file('dashed.txt')).catch(() => null)).toBeNull();
    // The envelope names the tool by its own name.
    expect(removed.body.context.risk).toBe('destructive');
  });
});
