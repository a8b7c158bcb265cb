// The text editor tool (str_replace_based_edit_tool) over the real app: commands, parameters and the reference's texts.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, withVersion, type TestApp } from '../helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeApp();
});
afterEach(async () => {
  await t.close();
});

const edit = (args: Record<string, unknown>) => t.call('str_replace_based_edit_tool', args);

describe('str_replace_based_edit_tool', () => {
  it('view numbers lines as cat -n, whole and by view_range (-1 = end)', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\ntwo\nthree\n');
    const whole = await edit({ command: 'view', path: 'a.txt' });
    expect(whole.body.text).toBe(withVersion("Here's the result of running `cat -n` on a.txt:\n     1\tone\n     2\ttwo\n     3\tthree\n", whole.body));
    const range = await t.call('text_editor', { command: 'view', path: 'a.txt', view_range: [2, -1] });
    expect(range.body.text).toBe(withVersion("Here's the result of running `cat -n` on a.txt:\n     2\ttwo\n     3\tthree\n", range.body));
    const bad = await edit({ command: 'view', path: 'a.txt', view_range: [5, 6] });
    expect(bad.body.error?.code).toBe('INVALID_PARAM');
    expect(bad.body.error?.message).toBe('Invalid `view_range`: [5, 6]. Its first element `5` should be within the range of lines of the file: [1, 3]');
  });

  it('view of a directory lists two levels deep without hidden entries', async () => {
    await fs.mkdir(t.file('d/e/f'), { recursive: true });
    await fs.writeFile(t.file('d/x.txt'), 'x');
    await fs.writeFile(t.file('d/e/f/deep.txt'), 'x');
    await fs.writeFile(t.file('d/.hidden'), 'x');
    const res = await edit({ command: 'view', path: 'd' });
    expect(res.body.text).toBe("Here's the files and directories up to 2 levels deep in d, excluding hidden items:\nd\nd/e\nd/e/f\nd/x.txt\n");
  });

  it('create writes a new file and refuses an existing one with the reference text', async () => {
    const res = await edit({ command: 'create', path: 'new/a.txt', file_text: 'hello\n' });
    expect(res.body.status).toBe('success');
    expect(res.body.text).toBe(withVersion('File created successfully at: new/a.txt', res.body));
    expect(await fs.readFile(t.file('new/a.txt'), 'utf8')).toBe('hello\n');
    const again = await edit({ command: 'create', path: 'new/a.txt', file_text: 'x' });
    expect(again.body.error?.code).toBe('ALREADY_EXISTS');
    expect(again.body.error?.message).toBe('File already exists at: new/a.txt. Cannot overwrite files using command `create`.');
    const missing = await edit({ command: 'create', path: 'b.txt' });
    expect(missing.body.error?.message).toBe('Parameter `file_text` is required for command: create');
  });

  it('str_replace edits through the engine and answers a numbered snippet', async () => {
    await fs.writeFile(t.file('a.py'), 'def f():\n    return 1\n');
    const res = await edit({ command: 'str_replace', file_path: 'a.py', old_str: 'return 1', new_str: 'return 2' });
    expect(res.body.status).toBe('success');
    expect(res.body.text).toBe(
      withVersion(
        "The file a.py has been edited. Here's the result of running `cat -n` on a snippet of a.py:\n     1\tdef f():\n     2\t    return 2\nReview the changes and make sure they are as expected. Edit the file again if necessary.",
        res.body,
      ),
    );
    expect(await fs.readFile(t.file('a.py'), 'utf8')).toBe('def f():\n    return 2\n');
  });

  it('str_replace without a match or with several answers the reference texts', async () => {
    await fs.writeFile(t.file('a.txt'), 'x = 1\nx = 1\n');
    const none = await edit({ command: 'str_replace', path: 'a.txt', old_str: 'y = 2', new_str: 'z' });
    expect(none.body.error?.code).toBe('NO_MATCH');
    expect(none.body.error?.message).toBe('No replacement was performed, old_str `y = 2` did not appear verbatim in a.txt.');
    const many = await edit({ command: 'str_replace', path: 'a.txt', old_str: 'x = 1', new_str: 'z' });
    expect(many.body.error?.code).toBe('MULTIPLE_MATCHES');
    expect(many.body.error?.message).toBe('No replacement was performed. Multiple occurrences of old_str `x = 1` in lines [1, 2]. Please ensure it is unique');
  });

  it('insert puts new_str after insert_line (0 = top) and checks the range', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\ntwo\n');
    const top = await edit({ command: 'insert', path: 'a.txt', insert_line: 0, new_str: 'zero' });
    expect(top.body.status).toBe('success');
    expect(top.body.text).toContain('has been edited');
    const end = await edit({ command: 'insert', path: 'a.txt', insert_line: 3, new_str: 'three' });
    expect(end.body.status).toBe('success');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('zero\none\ntwo\nthree\n');
    const bad = await edit({ command: 'insert', path: 'a.txt', insert_line: 9, new_str: 'x' });
    expect(bad.body.error?.message).toBe('Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 4]');
  });

  it('undo_edit takes back the last changes one by one, then says there is no history', async () => {
    await fs.writeFile(t.file('a.txt'), 'v1\n');
    await edit({ command: 'str_replace', path: 'a.txt', old_str: 'v1', new_str: 'v2' });
    await edit({ command: 'str_replace', path: 'a.txt', old_str: 'v2', new_str: 'v3' });
    const first = await edit({ command: 'undo_edit', path: 'a.txt' });
    expect(first.body.text).toBe(withVersion("Last edit to a.txt undone successfully. Here's the result of running `cat -n` on a.txt:\n     1\tv2\n", first.body));
    await edit({ command: 'undo_edit', path: 'a.txt' });
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('v1\n');
    const none = await edit({ command: 'undo_edit', path: 'a.txt' });
    expect(none.body.error?.message).toBe('No edit history found for a.txt.');
  });

  it('a missing file and a directory get the reference texts', async () => {
    await fs.mkdir(t.file('d'));
    const missing = await edit({ command: 'str_replace', path: 'nope.txt', old_str: 'a', new_str: 'b' });
    expect(missing.body.error?.message).toBe('The path nope.txt does not exist. Please provide a valid path.');
    const dir = await edit({ command: 'insert', path: 'd', insert_line: 0, new_str: 'x' });
    expect(dir.body.error?.message).toBe('The path d is a directory and only the `view` command can be used on directories');
    expect(existsSync(t.file('nope.txt'))).toBe(false);
  });
});

describe('str_replace_based_edit_tool versions', () => {
  it('under TOOLGATE_REQUIRE_VERSION=always asks for expected_sha256 from a view, then takes it', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'always' });
    await fs.writeFile(t.file('a.txt'), 'one\ntwo\n');
    const none = await edit({ command: 'str_replace', path: 'a.txt', old_str: 'two', new_str: '2' });
    expect([none.status, none.body.error?.code]).toEqual([428, 'VERSION_REQUIRED']);
    expect(none.body.error?.message).toBe('This server changes existing files only at a version you read (TOOLGATE_REQUIRE_VERSION=always): view \'a.txt\' first and pass expected_sha256 with data.version.sha256 of that view (or If-Match: "<sha256>").');
    for (const args of [{ command: 'insert', insert_line: 0, new_str: 'x' }, { command: 'undo_edit' }]) {
      expect((await edit({ path: 'a.txt', ...args })).body.error?.code).toBe('VERSION_REQUIRED');
    }
    const viewed = await t.call('text_editor', { command: 'view', path: 'a.txt' });
    const sha256 = (viewed.body.data as { version: { sha256: string } }).version.sha256;
    const ok = await edit({ command: 'str_replace', path: 'a.txt', old_str: 'two', new_str: '2', expected_sha256: sha256 });
    expect(ok.body.status).toBe('success');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('one\n2\n');
    // A new file has no version to send.
    expect((await edit({ command: 'create', path: 'new/b.txt', file_text: 'b\n' })).body.status).toBe('success');
  });

  it('refuses a stale expected_sha256 with CONFLICT in any mode, and one given to view or create', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\n');
    const viewed = await edit({ command: 'view', path: 'a.txt' });
    const sha256 = (viewed.body.data as { version: { sha256: string } }).version.sha256;
    await fs.writeFile(t.file('a.txt'), 'one changed\n');
    const stale = await edit({ command: 'insert', path: 'a.txt', insert_line: 1, new_str: 'x', expected_sha256: sha256 });
    expect([stale.status, stale.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('one changed\n');
    expect((await edit({ command: 'view', path: 'a.txt', expected_sha256: sha256 })).body.error?.code).toBe('INVALID_PARAM');
    expect((await edit({ command: 'create', path: 'c.txt', file_text: 'c', expected_sha256: sha256 })).body.error?.code).toBe('INVALID_PARAM');
    expect(existsSync(t.file('c.txt'))).toBe(false);
  });
});
