import { describe, expect, it } from 'vitest';
import { applyChunks, applyChunksDetailed } from '../../src/edit/patch-apply.js';
import { PatchError } from '../../src/edit/patch-error.js';
import { patchPathKey, planPatch } from '../../src/edit/patch-plan.js';
import { parsePatch, parseResponsesOperation, type PatchOp, type UpdateChunk } from '../../src/edit/patch-v4a.js';

const patch = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');

function errorOf(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (e) {
    if (e instanceof PatchError) return e;
    throw e;
  }
  throw new Error('expected a PatchError');
}

const chunk = (oldLines: string[], newLines: string[], extra: Partial<UpdateChunk> = {}): UpdateChunk => ({ oldLines, newLines, isEndOfFile: false, ...extra });

describe('parsePatch: grammar', () => {
  it('parses add, delete and update with move, @@ context and End of File', () => {
    const ops = parsePatch(patch(
      '*** Add File: path/add.py', '+abc', '+def',
      '*** Delete File: path/delete.py',
      '*** Update File: path/update.py', '*** Move to: path/update2.py',
      '@@ def f():', '-    pass', '+    return 123',
      '@@', ' tail', '+more', '*** End of File',
    ));
    expect(ops).toEqual<PatchOp[]>([
      { type: 'add', path: 'path/add.py', contents: 'abc\ndef\n' },
      { type: 'delete', path: 'path/delete.py' },
      {
        type: 'update', path: 'path/update.py', moveTo: 'path/update2.py', chunks: [
          { changeContext: ['def f():'], oldLines: ['    pass'], newLines: ['    return 123'], isEndOfFile: false, patchLine: 8 },
          { oldLines: ['tail'], newLines: ['tail', 'more'], isEndOfFile: true, patchLine: 11 },
        ],
      },
    ]);
  });

  it('lets the first hunk start without @@, as codex does', () => {
    const [op] = parsePatch(patch('*** Update File: file2.py', ' import foo', '+bar'));
    expect(op).toMatchObject({ type: 'update', chunks: [{ oldLines: ['import foo'], newLines: ['import foo', 'bar'] }] });
  });

  it('reads an empty line inside a hunk as an unchanged empty line', () => {
    const [op] = parsePatch(patch('*** Update File: a', '@@ ctx', '', ' context', '-remove', '+add'));
    expect(op).toMatchObject({ chunks: [{ oldLines: ['', 'context', 'remove'], newLines: ['', 'context', 'add'] }] });
  });

  it('stacks consecutive @@ lines outermost first', () => {
    const [op] = parsePatch(patch('*** Update File: a.py', '@@ class A:', '@@     def m(self):', '-        return 1', '+        return 2'));
    expect(op).toMatchObject({ chunks: [{ changeContext: ['class A:', '    def m(self):'] }] });
  });

  it('keeps the text of a unified-diff header and drops its line numbers', () => {
    const [op] = parsePatch(patch('*** Update File: a.py', '@@ -10,3 +10,3 @@ def f():', '-x', '+y'));
    expect(op).toMatchObject({ chunks: [{ changeContext: ['def f():'] }] });
  });

  it('accepts an empty Add File and CRLF patch text', () => {
    expect(parsePatch('*** Begin Patch\r\n*** Add File: empty.txt\r\n*** End Patch\r\n')).toEqual([{ type: 'add', path: 'empty.txt', contents: '' }]);
  });

  it('treats a Move to the same path as a plain update', () => {
    const [op] = parsePatch(patch('*** Update File: a', '*** Move to: a', '@@', '-x', '+y'));
    expect(op).not.toHaveProperty('moveTo');
  });
});

describe('parsePatch: lenient markers and heredoc', () => {
  const inner = patch('*** Update File: file2.py', ' import foo', '+bar');

  it.each([
    ['<<EOF', 'EOF'],
    ["<<'EOF'", 'EOF'],
    ['<<"EOF"', 'EOF'],
    ["apply_patch <<'EOF'", 'EOF'],
    ["apply_patch <<'PATCH'", 'PATCH'],
  ])('unwraps the heredoc %s … %s', (open, close) => {
    // Same operations; the heredoc's first line shifts the patch line numbers by one.
    expect(parsePatch(`${open}\n${inner}\n${close}\n`)).toMatchObject([{ path: 'file2.py', chunks: [{ newLines: ['import foo', 'bar'], patchLine: 4 }] }]);
  });

  it('refuses a heredoc whose quotes do not match or that is not closed', () => {
    expect(errorOf(() => parsePatch(`<<"EOF'\n${inner}\nEOF\n`)).code).toBe('INVALID_PATCH');
    expect(errorOf(() => parsePatch(`<<'EOF'\n${inner}\n`)).message).toMatch(/last line is not 'EOF'/);
  });

  it('accepts whitespace around the begin, end and file markers', () => {
    const text = ' *** Begin Patch \n  *** Update File: foo.txt  \n  *** Move to: bar.txt \n@@\n-old\n+new\n   *** End of File  \n *** End Patch \n\n';
    expect(parsePatch(text)).toEqual([{ type: 'update', path: 'foo.txt', moveTo: 'bar.txt', chunks: [{ oldLines: ['old'], newLines: ['new'], isEndOfFile: true, patchLine: 4 }] }]);
  });

  it('ends a hunk at a padded file marker rather than reading it as context', () => {
    const ops = parsePatch(patch('*** Update File: a', '@@', '-x', '+y', '  *** Delete File: b'));
    expect(ops.map((o) => o.type)).toEqual(['update', 'delete']);
  });

  it('skips blank lines between file sections', () => {
    expect(parsePatch(patch('', '*** Delete File: a', '', '*** Delete File: b', ''))).toHaveLength(2);
  });
});

describe('parsePatch: refusals', () => {
  it.each([
    ['empty text', ''],
    ['blank text', '  \n\n'],
    ['garbage', 'hello world'],
    ['no end marker', '*** Begin Patch\n*** Delete File: a'],
    ['no operations', '*** Begin Patch\n*** End Patch'],
    ['update without hunks', patch('*** Update File: test.py')],
    ['@@ without lines', patch('*** Update File: a', '@@')],
    ['End of File without lines', patch('*** Update File: a', '@@', '*** End of File')],
    ['bad hunk line', patch('*** Update File: a', '@@', 'bad')],
    ['second hunk without @@', patch('*** Update File: a', '@@', '-x', '*** End of File', ' y')],
    ['unknown header', patch('*** Rename File: a')],
    ['add line without +', patch('*** Add File: a', '+one', 'two')],
    ['path missing', patch('*** Delete File:   ')],
    ['text after End Patch', '*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Delete File: b\n*** End Patch'],
  ])('refuses %s with INVALID_PATCH', (_name, text) => {
    const err = errorOf(() => parsePatch(text));
    expect(err.code).toBe('INVALID_PATCH');
    expect(err.toToolError().code).toBe('INVALID_PARAM');
  });

  it('names the patch line and says what was expected', () => {
    const err = errorOf(() => parsePatch(patch('*** Update File: a', '@@', '-x', 'oops')));
    expect(err.message).toMatch(/line 5/);
    expect(err.message).toMatch(/starts with ' ' \(unchanged\), '-' \(removed\) or '\+' \(added\)/);
    expect(err.details).toEqual({ line: 5 });
  });

  it('explains a line without + inside Add File', () => {
    expect(errorOf(() => parsePatch(patch('*** Add File: a', '+one', 'two'))).message).toMatch(/must start with '\+'/);
  });
});

describe('applyChunks: matching passes', () => {
  it('finds the lines exactly', () => {
    expect(applyChunks('a\nb\nc\n', [chunk(['b'], ['B'])], 'f')).toBe('a\nB\nc\n');
  });

  it('then ignoring trailing whitespace', () => {
    const r = applyChunksDetailed('a  \nb\t\nc\n', [chunk(['a', 'b'], ['a', 'x'])], 'f');
    expect(r.hunks).toEqual([{ line: 1, pass: 'trailing_whitespace' }]);
    // The unchanged line is the file's own, trailing spaces included.
    expect(r.content).toBe('a  \nx\nc\n');
  });

  it('then ignoring surrounding whitespace', () => {
    const r = applyChunksDetailed('    foo   \n   bar\t\n', [chunk(['foo', 'bar'], ['foo', 'baz'])], 'f');
    expect(r.hunks[0]?.pass).toBe('whitespace');
    expect(r.content).toBe('    foo   \nbaz\n');
  });

  it('then with typographic punctuation made plain', () => {
    const file = 'say \u201Chello\u201D \u2014 it\u2019s\u00A0fine\nnext\n';
    const r = applyChunksDetailed(file, [chunk(['say "hello" - it\'s fine', 'next'], ['say "hello" - it\'s fine', 'NEXT'])], 'f');
    expect(r.hunks[0]?.pass).toBe('unicode');
    expect(r.content).toBe('say \u201Chello\u201D \u2014 it\u2019s\u00A0fine\nNEXT\n');
  });

  it('prefers an exact match later in the file over a tolerant one earlier', () => {
    expect(applyChunks('x  \ny\nx\n', [chunk(['x'], ['X'])], 'f')).toBe('x  \ny\nX\n');
  });

  it('applies hunks in order, each after the previous', () => {
    const file = 'a\nx\nb\nx\nc\n';
    expect(applyChunks(file, [chunk(['a', 'x'], ['a', 'X1']), chunk(['x'], ['X2'])], 'f')).toBe('a\nX1\nb\nX2\nc\n');
  });

  it('narrows with the @@ lines, in order', () => {
    const file = 'class A:\n  def m():\n    return 1\nclass B:\n  def m():\n    return 1\n';
    const out = applyChunks(file, [chunk(['    return 1'], ['    return 2'], { changeContext: ['class B:', 'def m():'] })], 'f');
    expect(out).toBe('class A:\n  def m():\n    return 1\nclass B:\n  def m():\n    return 2\n');
  });

  it('lets a hunk start on its own @@ line', () => {
    const out = applyChunks('def f():\n    pass\n', [chunk(['def f():', '    pass'], ['def f():', '    return 1'], { changeContext: ['def f():'] })], 'f');
    expect(out).toBe('def f():\n    return 1\n');
  });

  it('retries without a last empty old line that stands for the final newline', () => {
    expect(applyChunks('a\nb\n', [chunk(['b', ''], ['c', ''])], 'f')).toBe('a\nc\n');
  });

  it('anchors an End of File hunk at the end', () => {
    const file = 'x\ny\nx\n';
    expect(applyChunks(file, [chunk(['x'], ['z'], { isEndOfFile: true })], 'f')).toBe('x\ny\nz\n');
    expect(errorOf(() => applyChunks('x\ny\n', [chunk(['x'], ['z'], { isEndOfFile: true })], 'f')).code).toBe('NO_MATCH');
  });

  it('inserts a pure addition after its @@ line, or at the end without one', () => {
    expect(applyChunks('a\nb\n', [chunk([], ['new'], { changeContext: ['a'] })], 'f')).toBe('a\nnew\nb\n');
    expect(applyChunks('a\nb\n', [chunk([], ['new'])], 'f')).toBe('a\nb\nnew\n');
  });

  it('handles deletion-only hunks and emptying a file', () => {
    expect(applyChunks('a\nb\nc\n', [chunk(['b'], [])], 'f')).toBe('a\nc\n');
    expect(applyChunks('only\n', [chunk(['only'], [])], 'f')).toBe('');
  });
});

describe('applyChunks: refusals', () => {
  it('refuses lines that fit two places with no @@ line, naming them', () => {
    const err = errorOf(() => applyChunks('def f():\n    return 1\n\ndef g():\n    return 1\n', [chunk(['    return 1'], ['    return 2'])], 'src/a.py'));
    expect(err.code).toBe('MULTIPLE_MATCHES');
    expect(err.details).toMatchObject({ path: 'src/a.py', hunk: 1, candidate_lines: [2, 5], pass: 'exact' });
    expect(err.message).toMatch(/lines 2, 5/);
    expect(err.message).toMatch(/@@/);
  });

  it('counts candidates at the first pass that matches at all', () => {
    // The exact pass finds one place; the looser copy does not make it ambiguous.
    expect(applyChunks('x\n  x\n', [chunk(['x'], ['y'])], 'f')).toBe('y\n  x\n');
    // Only the whitespace pass matches, and there it fits twice.
    expect(errorOf(() => applyChunks(' x\n  x\n', [chunk(['x'], ['y'])], 'f')).details).toMatchObject({ candidate_lines: [1, 2], pass: 'whitespace' });
  });

  it('lets an @@ line choose between the places', () => {
    const file = 'def f():\n    return 1\n\ndef g():\n    return 1\n';
    expect(applyChunks(file, [chunk(['    return 1'], ['    return 2'], { changeContext: ['def g():'] })], 'f')).toBe('def f():\n    return 1\n\ndef g():\n    return 2\n');
  });

  it('says which lines were looked for and which are closest', () => {
    const err = errorOf(() => applyChunks('one\ntwo\nthree\nfour\n', [chunk(['two', 'THREE', 'four'], ['2'], { patchLine: 3 })], 'notes.txt'));
    expect(err.code).toBe('NO_MATCH');
    expect(err.message).toMatch(/^Hunk 1 \(patch line 3\) of notes\.txt/);
    expect(err.message).toContain('  | THREE');
    expect(err.message).toMatch(/closest lines are 2-4 \(2 of 3 equal\)/);
  });

  it('says when the lines are before the previous hunk', () => {
    const err = errorOf(() => applyChunks('a\nb\nc\n', [chunk(['c'], ['C']), chunk(['a'], ['A'])], 'f'));
    expect(err.code).toBe('NO_MATCH');
    expect(err.message).toMatch(/at line 1, before the previous hunk/);
  });

  it('refuses an @@ line that is not in the file', () => {
    const err = errorOf(() => applyChunks('a\n', [chunk(['a'], ['b'], { changeContext: ['def nope():'] })], 'f'));
    expect(err.code).toBe('NO_MATCH');
    expect(err.details).toMatchObject({ context: 'def nope():' });
  });
});

describe('applyChunks: line endings', () => {
  it('keeps CRLF files CRLF', () => {
    expect(applyChunks('a\r\nb\r\nc\r\n', [chunk(['b'], ['B', 'B2'])], 'f')).toBe('a\r\nB\r\nB2\r\nc\r\n');
  });

  it('keeps a missing final newline missing, and a present one present', () => {
    expect(applyChunks('a\nb', [chunk(['b'], ['c'])], 'f')).toBe('a\nc');
    expect(applyChunks('a\nb', [chunk([], ['c'])], 'f')).toBe('a\nb\nc');
    expect(applyChunks('a\r\nb', [chunk(['b'], ['b', 'c'])], 'f')).toBe('a\r\nb\r\nc');
    expect(applyChunks('a\nb\n', [chunk(['b'], ['c'])], 'f')).toBe('a\nc\n');
  });

  it('keeps a byte order mark out of the way and in the result', () => {
    expect(applyChunks('\uFEFFfirst\nsecond\n', [chunk(['first'], ['1st'])], 'f')).toBe('\uFEFF1st\nsecond\n');
  });

  it('keeps the ending of each unchanged line in a mixed file', () => {
    expect(applyChunks('a\r\nb\nc\r\n', [chunk(['a', 'b', 'c'], ['a', 'B', 'c'])], 'f')).toBe('a\r\nB\r\nc\r\n');
  });
});

describe('planPatch', () => {
  const tree = (files: Record<string, string>) => (p: string) => files[patchPathKey(p)] ?? null;

  it('returns one result per file, in patch order', () => {
    const ops = parsePatch(patch('*** Add File: n.txt', '+hi', '*** Delete File: d.txt', '*** Update File: u.txt', '*** Move to: m.txt', '@@', '-a', '+b'));
    expect(planPatch(ops, tree({ 'd.txt': 'bye\n', 'u.txt': 'a\n' }))).toEqual([
      { path: 'n.txt', kind: 'create', oldContent: null, newContent: 'hi\n' },
      { path: 'd.txt', kind: 'delete', oldContent: 'bye\n', newContent: null },
      { path: 'u.txt', moveTo: 'm.txt', kind: 'update', oldContent: 'a\n', newContent: 'b\n', hunks: [{ line: 1, pass: 'exact' }] },
    ]);
  });

  it('refuses the whole patch when a later file fails', () => {
    const ops = parsePatch(patch('*** Add File: ok.txt', '+fine', '*** Update File: u.txt', '@@', '-missing', '+x'));
    expect(errorOf(() => planPatch(ops, tree({ 'u.txt': 'a\n' }))).code).toBe('NO_MATCH');
  });

  it.each([
    ['Add over an existing file', patch('*** Add File: u.txt', '+x'), 'ALREADY_EXISTS'],
    ['Update of a missing file', patch('*** Update File: nope.txt', '@@', '-a', '+b'), 'NOT_FOUND'],
    ['Delete of a missing file', patch('*** Delete File: nope.txt'), 'NOT_FOUND'],
    ['Move onto an existing file', patch('*** Update File: u.txt', '*** Move to: v.txt', '@@', '-a', '+b'), 'ALREADY_EXISTS'],
    ['two operations on one path', patch('*** Update File: u.txt', '@@', '-a', '+b', '*** Update File: ./u.txt', '@@', '-b', '+c'), 'INVALID_PATCH'],
    ['a move onto a path another operation names', patch('*** Update File: u.txt', '*** Move to: n.txt', '@@', '-a', '+b', '*** Add File: n.txt', '+x'), 'INVALID_PATCH'],
  ])('refuses %s', (_name, text, code) => {
    expect(errorOf(() => planPatch(parsePatch(text), tree({ 'u.txt': 'a\n', 'v.txt': 'v\n' }))).code).toBe(code);
  });

  it('reads each path once and writes nothing', () => {
    const seen: string[] = [];
    planPatch(parsePatch(patch('*** Update File: u.txt', '@@', '-a', '+b')), (p) => (seen.push(p), 'a\n'));
    expect(seen).toEqual(['u.txt']);
  });
});

describe('parseResponsesOperation', () => {
  it('creates a file from + lines as the Agents SDK joins them', () => {
    expect(parseResponsesOperation({ type: 'create_file', path: 'a.txt', diff: '+hello\n+world\n+' })).toEqual({ type: 'add', path: 'a.txt', contents: 'hello\nworld\n' });
    expect(parseResponsesOperation({ type: 'create_file', path: 'a.txt', diff: '+hello\n+world' })).toEqual({ type: 'add', path: 'a.txt', contents: 'hello\nworld' });
  });

  it('refuses a create_file line without +', () => {
    expect(errorOf(() => parseResponsesOperation({ type: 'create_file', path: 'a.txt', diff: 'plain line' })).code).toBe('INVALID_PATCH');
  });

  it('reads update_file hunks without file headers', () => {
    const op = parseResponsesOperation({ type: 'update_file', path: 'src/main.ts', diff: '@@ function main() {\n-  old();\n+  console.log("hi");\n }\n' });
    expect(op).toEqual({
      type: 'update', path: 'src/main.ts',
      chunks: [{ changeContext: ['function main() {'], oldLines: ['  old();', '}'], newLines: ['  console.log("hi");', '}'], isEndOfFile: false, patchLine: 1 }],
    });
    expect(applyChunks('function main() {\n  old();\n}\n', (op as Extract<PatchOp, { type: 'update' }>).chunks, 'src/main.ts')).toBe('function main() {\n  console.log("hi");\n}\n');
  });

  it('accepts a whole patch for the same file in the diff field', () => {
    const op = parseResponsesOperation({ type: 'update_file', path: 'a', diff: patch('*** Update File: a', '@@', '-x', '+y') });
    expect(op).toMatchObject({ type: 'update', path: 'a' });
    expect(errorOf(() => parseResponsesOperation({ type: 'update_file', path: 'a', diff: patch('*** Update File: b', '@@', '-x', '+y') })).code).toBe('INVALID_PATCH');
  });

  it('deletes without a diff', () => {
    expect(parseResponsesOperation({ type: 'delete_file', path: 'gone.txt' })).toEqual({ type: 'delete', path: 'gone.txt' });
  });

  it('refuses an update_file diff with file markers in it', () => {
    expect(errorOf(() => parseResponsesOperation({ type: 'update_file', path: 'a', diff: '@@\n-x\n+y\n*** Delete File: b\n' })).code).toBe('INVALID_PATCH');
  });
});
