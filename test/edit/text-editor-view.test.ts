import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/envelope.js';
import { catN, createdText, insertText, occurrenceLines, strReplaceText, undoneText, viewText } from '../../src/edit/text-editor-view.js';
import { E } from '../../src/errors.js';

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ToolError) {
      expect(e.code).toBe('INVALID_PARAM');
      return e.message;
    }
    throw e;
  }
  throw new Error('expected a ToolError');
}

const tenLines = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n';

describe('catN', () => {
  it('numbers lines right-aligned in six columns, then a tab', () => {
    expect(catN('first\n\tsecond\n')).toBe('     1\tfirst\n     2\t\tsecond');
  });

  it('shows no empty line for the final newline, and keeps a last line without one', () => {
    expect(catN('x\ny')).toBe('     1\tx\n     2\ty');
    expect(catN('')).toBe('     1\t');
  });

  it('numbers past six digits without cutting', () => {
    const many = Array.from({ length: 1_000_001 }, () => '').join('\n') + 'z';
    expect(catN(many, [1_000_001, -1])).toBe('1000001\tz');
  });

  it('shows a view_range, with -1 for the end', () => {
    expect(catN(tenLines, [3, 4])).toBe('     3\tc\n     4\td');
    expect(catN(tenLines, [9, -1])).toBe('     9\ti\n    10\tj');
    expect(catN(tenLines, [10, 10])).toBe('    10\tj');
  });

  it("refuses bad ranges with the reference tool's texts", () => {
    expect(messageOf(() => catN(tenLines, [1]))).toBe('Invalid `view_range`. It should be a list of two integers.');
    expect(messageOf(() => catN(tenLines, [1.5, 2]))).toBe('Invalid `view_range`. It should be a list of two integers.');
    expect(messageOf(() => catN(tenLines, [0, 2]))).toBe('Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 10]');
    expect(messageOf(() => catN(tenLines, [11, -1]))).toBe('Invalid `view_range`: [11, -1]. Its first element `11` should be within the range of lines of the file: [1, 10]');
    expect(messageOf(() => catN(tenLines, [2, 12]))).toBe('Invalid `view_range`: [2, 12]. Its second element `12` should be smaller than the number of lines in the file: `10`');
    expect(messageOf(() => catN(tenLines, [5, 3]))).toBe('Invalid `view_range`: [5, 3]. Its second element `3` should be larger or equal than its first `5`');
  });
});

describe('result texts', () => {
  it('view', () => {
    expect(viewText('/repo/a.txt', 'x\n')).toBe("Here's the result of running `cat -n` on /repo/a.txt:\n     1\tx\n");
  });

  it('create and path errors', () => {
    expect(createdText('/repo/new.py')).toBe('File created successfully at: /repo/new.py');
    expect(E.editorFileExists('/repo/a').message).toBe('File already exists at: /repo/a. Cannot overwrite files using command `create`.');
    expect(E.editorPathMissing('/repo/a').message).toBe('The path /repo/a does not exist. Please provide a valid path.');
    expect(E.editorIsDirectory('/repo').message).toBe('The path /repo is a directory and only the `view` command can be used on directories');
    expect(E.editorParameterMissing('old_str', 'str_replace').message).toBe('Parameter `old_str` is required for command: str_replace');
  });

  it('str_replace refusals', () => {
    expect(E.editorNoMatch('/repo/a.py', 'foo()', undefined).message).toBe('No replacement was performed, old_str `foo()` did not appear verbatim in /repo/a.py.');
    expect(E.editorMultipleMatches('x = 1', [2, 7], undefined).message).toBe('No replacement was performed. Multiple occurrences of old_str `x = 1` in lines [2, 7]. Please ensure it is unique');
  });

  it('finds the start line of each occurrence, multi-line ones too', () => {
    expect(occurrenceLines('x = 1\ny\nx = 1\n', 'x = 1')).toEqual([1, 3]);
    expect(occurrenceLines('a\nb\nc\na\nb\n', 'a\nb')).toEqual([1, 4]);
    expect(occurrenceLines('aaaa', 'aa')).toEqual([1, 1]);
    expect(occurrenceLines('abc', '')).toEqual([]);
  });

  it('str_replace success shows four lines around the change', () => {
    const oldContent = tenLines;
    const offset = oldContent.indexOf('f');
    const newContent = oldContent.replace('f', 'F1\nF2');
    expect(strReplaceText('/r/t.txt', newContent, offset, 'F1\nF2')).toBe(
      "The file /r/t.txt has been edited. Here's the result of running `cat -n` on a snippet of /r/t.txt:\n" +
        '     2\tb\n     3\tc\n     4\td\n     5\te\n     6\tF1\n     7\tF2\n     8\tg\n     9\th\n    10\ti\n    11\tj\n' +
        'Review the changes and make sure they are as expected. Edit the file again if necessary.',
    );
  });

  it('str_replace near the top starts the snippet at line 1, with no empty line for the final newline', () => {
    expect(strReplaceText('/r/t', 'A\nb\n', 0, 'A')).toBe(
      "The file /r/t has been edited. Here's the result of running `cat -n` on a snippet of /r/t:\n     1\tA\n     2\tb\nReview the changes and make sure they are as expected. Edit the file again if necessary.",
    );
  });

  it('insert', () => {
    expect(insertText('/r/t', tenLines, 6, 'new')).toBe(
      "The file /r/t has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n" +
        '     3\tc\n     4\td\n     5\te\n     6\tf\n     7\tnew\n     8\tg\n     9\th\n    10\ti\n    11\tj\n' +
        'Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.',
    );
    expect(insertText('/r/t', 'a\n', 0, 'top')).toMatch(/:\n {5}1\ttop\n {5}2\ta\nReview/);
    expect(E.editorInsertLineInvalid(12, 10).message).toBe('Invalid `insert_line` parameter: 12. It should be within the range of lines of the file: [0, 10]');
  });

  it('undo', () => {
    expect(undoneText('/r/t', 'old\n')).toBe("Last edit to /r/t undone successfully. Here's the result of running `cat -n` on /r/t:\n     1\told\n");
    expect(E.editorNoHistory('/r/t').message).toBe('No edit history found for /r/t.');
  });
});
