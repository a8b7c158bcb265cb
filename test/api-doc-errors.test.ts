// docs/api.md's error table is what clients read to handle errors: it must list every code of ERROR_STATUS
// (src/errors.ts) with its HTTP status, and nothing else, so that a code added on one side shows here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../src/envelope.js';

const DOC = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');

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

describe('docs/api.md error table', () => {
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
});
