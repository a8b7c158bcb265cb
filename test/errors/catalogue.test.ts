// The error catalogue (src/errors.ts) and docs/api.md's error table, which clients read to handle errors, must
// agree both ways: every code of ERROR_STATUS documented with its HTTP status and nothing else documented, so
// that a code added on one side shows here; and every factory answers with a documented code.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE_AREAS, E, ERROR_STATUS, OFFICE_ERROR_ENVELOPE, OfficeError, PATCH_ERROR_ENVELOPE, PatchError, ToolError } from '../../src/errors.js';
import { ApprovalError } from '../../src/policy/approvals.js';

const DOC = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');

/** The rows of the table under "## Error codes": each code of its first column with the row's status. */
function documentedCodes(): Map<string, number> {
  const section = DOC.split(/^## Error codes$/m)[1]?.split(/^## /m)[0] ?? '';
  const out = new Map<string, number>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4 || !/^\d{3}$/.test(cells[2] ?? '')) continue;
    for (const code of (cells[1] ?? '').matchAll(/`([A-Z_]+)`/g)) {
      expect(out.has(code[1] ?? ''), `${code[1]} is listed twice`).toBe(false);
      out.set(code[1] ?? '', Number(cells[2]));
    }
  }
  return out;
}

describe('docs/api.md error table and the catalogue', () => {
  const documented = documentedCodes();

  it('lists every code of ERROR_STATUS with its HTTP status', () => {
    const missing = Object.keys(ERROR_STATUS).filter((c) => !documented.has(c));
    expect(missing).toEqual([]);
    for (const [code, status] of Object.entries(ERROR_STATUS)) expect(documented.get(code), code).toBe(status);
  });

  it('lists no code the service does not have', () => {
    const unknown = [...documented.keys()].filter((c) => !(c in ERROR_STATUS));
    expect(unknown).toEqual([]);
  });

  it('maps every finer office and patch code to a documented envelope code', () => {
    for (const [finer, code] of [...Object.entries(OFFICE_ERROR_ENVELOPE), ...Object.entries(PATCH_ERROR_ENVELOPE)]) {
      expect(documented.has(code), `${finer} -> ${code}`).toBe(true);
    }
  });
});

describe('the catalogue', () => {
  it('declares each factory in one area only', () => {
    const seen = new Map<string, string>();
    for (const [area, factories] of Object.entries(CATALOGUE_AREAS)) {
      for (const name of Object.keys(factories)) {
        expect(seen.get(name), `${name} is declared in ${area} and ${seen.get(name)}`).toBeUndefined();
        seen.set(name, area);
      }
    }
    expect(Object.keys(E).length).toBe(seen.size);
  });

  it('answers from every factory with a documented code, or a finer one the catalogue maps', () => {
    // One stand-in for every argument: it prints as text, slices, joins and spreads like the values sites pass.
    const arg = ['x'];
    const wrong: string[] = [];
    for (const [name, factory] of Object.entries(E) as [string, (...args: unknown[]) => unknown][]) {
      if (name === 'patchFailed' || name === 'documentUnreadable' || name === 'fromEditWorker' || name === 'entryInflateLimit' || name === 'workerOfficeError') continue; // codes given by the caller, below
      const err = factory(...Array.from({ length: factory.length }, () => arg));
      const known =
        err instanceof ToolError ? err.code in ERROR_STATUS
        : err instanceof PatchError ? err.code in PATCH_ERROR_ENVELOPE
        : err instanceof OfficeError ? err.code in OFFICE_ERROR_ENVELOPE
        : false;
      if (!known || typeof (err as Error).message !== 'string' || (err as Error).message === '') wrong.push(name);
    }
    expect(wrong).toEqual([]);
  });

  it('answers with a ToolError whose status is its code\'s', () => {
    const err = E.fileNotFound('a.txt');
    expect(err).toBeInstanceOf(ToolError);
    expect({ code: err.code, message: err.message, httpStatus: err.httpStatus, details: err.details }).toEqual({
      code: 'NOT_FOUND',
      message: 'File not found: a.txt',
      httpStatus: 404,
      details: undefined,
    });
  });

  it('keeps the finer codes of the engines in details', () => {
    const patch = E.patchFailed('INVALID_PATCH', 'Line 3: no hunk.', { line: 3 });
    expect([patch.code, patch.httpStatus, patch.details]).toEqual(['INVALID_PARAM', 400, { line: 3, patch_code: 'INVALID_PATCH' }]);
    const office = E.documentUnreadable('a.docx', 'ARCHIVE_TOO_LARGE', 'Too many entries.', { entries: 9 });
    expect([office.code, office.httpStatus, office.message, office.details]).toEqual(['FILE_TOO_LARGE', 413, "'a.docx': Too many entries.", { entries: 9, office_code: 'ARCHIVE_TOO_LARGE' }]);
    const inflated = E.entryInflateLimit('ARCHIVE_UNSAFE', 'Entry lies.', 'word/document.xml');
    expect([inflated.code, inflated.envelopeCode, inflated.message, inflated.details]).toEqual(['ARCHIVE_UNSAFE', 'ENCODING_ERROR', 'Entry lies.', { entry: 'word/document.xml' }]);
    const fromWorker = E.workerOfficeError('INVALID_SELECTOR', 'No sheet named X.');
    expect([fromWorker.code, fromWorker.envelopeCode, fromWorker.message]).toEqual(['INVALID_SELECTOR', 'INVALID_PARAM', 'No sheet named X.']);
  });

  it('answers the approval flow with ApprovalErrors that are ToolErrors of the one status table', () => {
    const err = E.approvalExpired('apr_x', 'has expired');
    expect(err).toBeInstanceOf(ApprovalError);
    expect(err).toBeInstanceOf(ToolError);
    expect([err.code, err.httpStatus]).toEqual(['APPROVAL_EXPIRED', 410]);
  });
});
